package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// TestTheGateKeepsFromToolsWhatTheSandboxHides: whatever the OS sandbox
// hides from every command (kz's config and data directories, a
// --data-dir, the log, what a Read deny rule names) the gate keeps from
// kz's own tools, which run in kz's process, where the sandbox does not
// reach: with kz run in the home directory, all of it is in the workspace,
// and a search does not enter it nor a read of it go without a person's
// yes, in yolo too.
func TestTheGateKeepsFromToolsWhatTheSandboxHides(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	writeFiles(t, home, map[string]string{
		".config/kz/config.toml": "[permissions]\ndeny = [\"Read(./private/**)\"]\n",
		"private/notes.txt":      "the person's secret notes\n",
		"src/main.go":            "package main\n",
	})
	t.Chdir(home)
	e, err := Load(filepath.Join(home, "kzdata"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.Gate(true, permission.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	hidden := e.hidden(g)
	// The config and data directories, the --data-dir, the log and its
	// predecessor, the Read deny rule's directory.
	if len(hidden) != 6 {
		t.Fatalf("hidden %q", hidden)
	}
	for _, h := range hidden {
		if !strings.HasPrefix(h, home+string(filepath.Separator)) {
			t.Fatalf("%s is not below the workspace %s", h, home)
		}
		for _, p := range []string{h, filepath.Join(h, "kz.db")} {
			if d, why := g.ReadDecision(home, p); d != engine.DecisionDeny {
				t.Errorf("a search meets %s: %q %s", p, d, why)
			}
			for _, tool := range []string{"read_file", "grep", "list_dir"} {
				v := g.Check(context.Background(), engine.GateQuery{Runtime: "native", Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionYolo,
					Workspace: home, Request: engine.PermissionRequest{Tool: tool, Paths: []string{p}}})
				if v.Decision == engine.DecisionAllow {
					t.Errorf("%s of %s: allowed (%s)", tool, p, v.Reason)
				}
			}
		}
	}
	if d, why := g.ReadDecision(home, filepath.Join(home, "src", "main.go")); d == engine.DecisionDeny {
		t.Errorf("the person's code is withheld: %s", why)
	}
}
