package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestMentionReaderUsesTheReadFileGate: a mention is read by the read_file
// tool only when the real gate allows read_file on it; a deny rule, a path
// outside the workspace and analysis of the mode all apply as for the
// model's own reads. Each decision is journaled: the session's events in
// the store hold a permission_decided event for every mention the gate
// judged.
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
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	w := st.NewWriter()
	defer func() { _ = w.Close() }()
	rt, err := scripted.Parse("scripted", "test.jsonl", strings.NewReader(`{"kz_script":1,"capabilities":["text_completion"]}`+"\n"+`{"type":"assistant_message","text":"ok"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := engine.NewSession(engine.Config{Journal: w, Workspace: ws.Dir(), Gate: gate, Interactive: true,
		Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}, Runtime: "scripted",
		Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk})
	if err != nil {
		t.Fatal(err)
	}
	w.CreateLazily(store.SessionInfo{ID: sess.ID(), Workspace: ws.Dir(), Mode: engine.ModeFullAutonomous})
	r := mentionReader{sess: sess, env: tools.NewEnv(ws, sess.ID(), nil)}
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
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}

	var decided []string
	if err := st.Events(ctx, sess.ID(), func(ev engine.Event) error {
		if ev.Type == engine.EventPermissionDecided && ev.ToolCallID == "mention" {
			decided = append(decided, ev.Tool+" "+strings.Join(ev.Paths, ",")+" "+string(ev.Decision))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The path outside the workspace never reaches the gate: read_file
	// refuses it while preparing the call.
	if want := "read_file a.txt allow; read_file secret.txt deny"; strings.Join(decided, "; ") != want {
		t.Fatalf("the store holds the mentions' decisions %q, want %q", decided, want)
	}
}
