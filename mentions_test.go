package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
)

type fixedState engine.State

func (s fixedState) State() engine.State { return engine.State(s) }

// TestMentionReaderUsesTheReadFileGate: a mention is read by the read_file
// tool only when the real gate allows read_file on it; a deny rule, a path
// outside the workspace and analysis of the mode all apply as for the
// model's own reads.
func TestMentionReaderUsesTheReadFileGate(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.txt": "alpha\nbeta\n", "secret.txt": "hunter2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.Close() }()
	gate, err := permission.New(permission.Options{User: permission.Rules{Deny: []string{"Read(./secret.txt)"}},
		Home: t.TempDir(), ConfigDir: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r := mentionReader{gate: gate, env: tools.NewEnv(ws, "s1", nil), dir: ws.Dir(),
		sess: fixedState{ID: "s1", Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk}}
	ctx := context.Background()
	out, err := r.ReadMention(ctx, "a.txt")
	if err != nil || !strings.Contains(out, "alpha") || !strings.Contains(out, "beta") {
		t.Fatalf("a.txt: %q, %v", out, err)
	}
	if out, err := r.ReadMention(ctx, "secret.txt"); err == nil || strings.Contains(out, "hunter2") || !strings.Contains(err.Error(), "deny") {
		t.Fatalf("secret.txt was read: %q, %v", out, err)
	}
	if _, err := r.ReadMention(ctx, "../outside.txt"); err == nil {
		t.Fatal("a path outside the workspace was read")
	}
}
