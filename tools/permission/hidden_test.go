package permission

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/testfs"
)

// ownFixture is kz run in the home directory: the workspace holds kz's
// config directory, its data directory (the store) and its log, which the
// OS sandbox hides from every command, beside files of the person's own.
type ownFixture struct {
	*fixture
	g   *Gate
	log string
}

func newOwnFixture(t *testing.T) ownFixture {
	t.Helper()
	f := newFixture(t)
	log := filepath.Join(f.home, ".local", "state", "kz", "kz.log")
	testfs.Write(t, f.home, map[string]string{
		".local/share/kz/kz.db":                 "every session's history",
		".local/share/kz/sandbox/search-1.json": "{}",
		".local/state/kz/kz.log":                "kz's log",
		".local/share/kz-old/notes.txt":         "the person's own",
		".local/state/kz.log.txt":               "the person's own",
		"src/main.go":                           "package main",
	})
	// A link in the workspace into the store is the store.
	if err := os.Symlink(filepath.Join(f.home, ".local", "share", "kz"), filepath.Join(f.home, "store")); err != nil {
		t.Fatal(err)
	}
	return ownFixture{fixture: f, g: f.gate(t, Options{Private: []string{log}}), log: log}
}

// TestKzsOwnFilesAreNotReadForTheModel: where the workspace holds kz's
// own directories (kz run in the home directory), the gate holds every
// tool to what the OS sandbox enforces for commands, which never see
// them: no read of them is allowed without a person's yes, in any mode
// or permission mode, whichever tool or path names them; a command's
// read of them is refused, and a write to them too.
func TestKzsOwnFilesAreNotReadForTheModel(t *testing.T) {
	o := newOwnFixture(t)
	reads := []gateCase{
		{name: "read the store", tool: "read_file", paths: []string{".local/share/kz/kz.db"}},
		{name: "read the store by its absolute path", tool: "read_file", paths: []string{filepath.Join(o.home, ".local/share/kz/kz.db")}},
		{name: "read the store through a link", tool: "read_file", paths: []string{"store/kz.db"}},
		{name: "read the saved sandbox search", tool: "read_file", paths: []string{".local/share/kz/sandbox/search-1.json"}},
		{name: "read the config", tool: "read_file", paths: []string{".config/kz/config.toml"}},
		{name: "read the log", tool: "read_file", paths: []string{".local/state/kz/kz.log"}},
		{name: "grep the data directory", tool: "grep", paths: []string{".local/share/kz"}},
		{name: "list the config directory", tool: "list_dir", paths: []string{".config/kz"}},
		{name: "glob below the link", tool: "glob", paths: []string{"store"}},
	}
	// Every runtime's read tools: kz's own, Claude Code's, Gemini CLI's.
	for _, c := range reads {
		for _, tool := range readTools() {
			for _, mode := range allMode {
				for _, pm := range allPM {
					c.tool, c.mode, c.pm = tool, mode, pm
					v := o.g.Check(context.Background(), c.query(o.home))
					if v.Decision == engine.DecisionAllow {
						t.Errorf("%s with %s (%s, %s): allowed: %s", c.name, tool, mode, pm, v.Reason)
					}
				}
			}
		}
	}
	refused := []gateCase{
		{name: "cat the store", cmd: "cat .local/share/kz/kz.db", pm: engine.PermissionYolo},
		{name: "cat the store through a link", cmd: "cat store/kz.db", pm: engine.PermissionYolo},
		{name: "cat the store from the home", cmd: "cat ~/.local/share/kz/kz.db", pm: engine.PermissionYolo},
		{name: "cat the store by $HOME", cmd: "cat $HOME/.local/share/kz/kz.db", pm: engine.PermissionYolo},
		{name: "cat the store under env", cmd: "env LC_ALL=C cat .local/share/kz/kz.db", pm: engine.PermissionYolo},
		{name: "cat the store under timeout", cmd: "timeout 5 cat .local/share/kz/kz.db", pm: engine.PermissionYolo},
		{name: "cat the store in bash -c", cmd: "bash -c 'cat .local/share/kz/kz.db'", pm: engine.PermissionYolo},
		{name: "cat the store in a pipeline", cmd: "true && cat ./.local/share/kz/kz.db | head -c 10", pm: engine.PermissionYolo},
		{name: "head the config", cmd: "head -n 5 .config/kz/config.toml", pm: engine.PermissionYolo},
		{name: "read the log by redirection", cmd: "wc -l < .local/state/kz/kz.log", pm: engine.PermissionYolo},
		{name: "write the log", tool: "write_file", paths: []string{".local/state/kz/kz.log"}, write: true, pm: engine.PermissionYolo},
		{name: "append to the log", cmd: "echo x >> .local/state/kz/kz.log", pm: engine.PermissionYolo},
	}
	for _, c := range refused {
		if v := o.g.Check(context.Background(), c.query(o.home)); v.Decision != engine.DecisionDeny {
			t.Errorf("%s: %s (%s), want deny", c.name, v.Decision, v.Reason)
		}
	}
	// Not proven, so never allowed without a yes (yolo's yes runs it in
	// the sandbox, which hides the store).
	asked := []gateCase{
		{name: "grep everything", cmd: "grep -r secret ."},
		{name: "grep the folder that holds the store", cmd: "grep -r secret .local"},
		{name: "cat the store by a glob", cmd: "cat .local/share/k?/kz.db"},
	}
	for _, c := range asked {
		if v := o.g.Check(context.Background(), c.query(o.home)); v.Decision != engine.DecisionAsk {
			t.Errorf("%s: %s (%s), want ask", c.name, v.Decision, v.Reason)
		}
	}
	// What only looks like kz's own is the person's: whole components
	// count, not a prefix of the name.
	for _, c := range []gateCase{
		{name: "a folder named like the data directory", tool: "read_file", paths: []string{".local/share/kz-old/notes.txt"}},
		{name: "a file named like the log", tool: "read_file", paths: []string{".local/state/kz.log.txt"}},
		{name: "the person's code", tool: "read_file", paths: []string{"src/main.go"}},
	} {
		if v := o.g.Check(context.Background(), c.query(o.home)); v.Decision != engine.DecisionAllow {
			t.Errorf("%s: %s (%s), want allow", c.name, v.Decision, v.Reason)
		}
	}
}

// TestReadDecisionLeavesOutKzsOwnFiles: what a search meets below an
// allowed root is judged by ReadDecision, which refuses kz's own files
// and directories (so a walk does not enter them) and nothing that only
// shares a prefix of their names.
func TestReadDecisionLeavesOutKzsOwnFiles(t *testing.T) {
	o := newOwnFixture(t)
	for rel, want := range map[string]engine.Decision{
		".local/share/kz":                engine.DecisionDeny,
		".local/share/kz/kz.db":          engine.DecisionDeny,
		".config/kz":                     engine.DecisionDeny,
		".config/kz/config.toml":         engine.DecisionDeny,
		".local/state/kz/kz.log":         engine.DecisionDeny,
		".local/share/kz-old/notes.txt":  "",
		".local/state/kz.log.txt":        "",
		".local/state/kz/kz.log.1.gz":    "",
		".local/share":                   "",
		"src/main.go":                    "",
		".config/kzz/config.toml":        "",
		".local/share/kz/../kz-old/x.md": "",
	} {
		abs := filepath.Clean(filepath.Join(o.home, rel))
		if d, why := o.g.ReadDecision(o.home, abs); d != want {
			t.Errorf("%s: %q (%s), want %q", rel, d, why, want)
		}
	}
}

// TestTheHomesCredentialsAreNotReadForTheModel: the credential files of
// the home that only their place names (the agents' logins, tokens under
// ~/.config, shell histories, HomeCredentialPaths), which the OS sandbox
// hides from every command, are not read by kz's own tools either when
// the workspace is the home: not without a person's yes, in any mode or
// permission mode, nor searched, nor read or written by a command.
func TestTheHomesCredentialsAreNotReadForTheModel(t *testing.T) {
	f := newFixture(t)
	g := f.gate(t, Options{})
	dirs := map[string]bool{".config/gh": true, ".config/hub": true, ".config/gcloud": true, ".config/doctl": true, ".config/op": true,
		".config/rclone": true, ".config/github-copilot": true, ".config/configstore": true, ".oci": true, ".local/share/keyrings": true,
		".password-store": true}
	paths := HomeCredentialPaths()
	if len(paths) < 40 {
		t.Fatalf("only %d paths", len(paths))
	}
	for _, rel := range paths {
		file := rel
		if dirs[rel] || IsCredentialDir(rel) {
			file = rel + "/token"
		}
		full := filepath.Join(f.home, file)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("token"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tool := range readTools() {
			for _, mode := range allMode {
				for _, pm := range allPM {
					c := gateCase{tool: tool, paths: []string{file}, mode: mode, pm: pm}
					if v := g.Check(context.Background(), c.query(f.home)); v.Decision == engine.DecisionAllow {
						t.Errorf("%s %s (%s, %s): allowed: %s", tool, file, mode, pm, v.Reason)
					}
				}
			}
		}
		if d, why := g.ReadDecision(f.home, full); d != engine.DecisionDeny {
			t.Errorf("a search meets %s: %q %s", file, d, why)
		}
		for _, c := range []gateCase{
			{cmd: "cat " + file, pm: engine.PermissionYolo},
			{cmd: "cat ~/" + file, pm: engine.PermissionYolo},
			{cmd: "timeout 5 head -c 3 " + file, pm: engine.PermissionYolo},
			{tool: "write_file", paths: []string{file}, write: true, pm: engine.PermissionYolo},
		} {
			if v := g.Check(context.Background(), c.query(f.home)); v.Decision != engine.DecisionDeny {
				t.Errorf("%s%s %s: %s (%s), want deny", c.tool, c.cmd, file, v.Decision, v.Reason)
			}
		}
	}
	// A search of the home meets them: it asks.
	if v := g.Check(context.Background(), gateCase{cmd: "grep -r token .local/share"}.query(f.home)); v.Decision != engine.DecisionAsk {
		t.Errorf("grep -r token .local/share: %s (%s), want ask", v.Decision, v.Reason)
	}
	// Only the home's: the same names elsewhere in a project are not
	// secrets by their place.
	for _, rel := range []string{"proj/.config/gh/notes.md", "proj/.bash_history", "proj/.codex/auth.json"} {
		if d, why := g.ReadDecision(f.root, filepath.Join(f.root, rel)); d == engine.DecisionDeny {
			t.Errorf("%s withheld: %s", rel, why)
		}
	}
}

// TestAnotherProcesssEnvironmentIsNotReadForTheModel: with / for a
// workspace, /proc is in it; another process's environment (kz's own
// holds its keys) and memory are secrets to kz's tools as to commands,
// whose sandbox shows them only their own processes.
func TestAnotherProcesssEnvironmentIsNotReadForTheModel(t *testing.T) {
	f := newFixture(t)
	g := f.gate(t, Options{})
	for _, p := range []string{"/proc/self/environ", "/proc/1/environ", "/proc/self/mem"} {
		for _, pm := range allPM {
			c := gateCase{tool: "read_file", paths: []string{p}, pm: pm}
			if v := g.Check(context.Background(), c.query("/")); v.Decision == engine.DecisionAllow {
				t.Errorf("read_file %s (%s): allowed: %s", p, pm, v.Reason)
			}
		}
	}
	if d, why := g.ReadDecision("/", "/proc/1/environ"); d != engine.DecisionDeny {
		t.Errorf("a search meets /proc/1/environ: %q %s", d, why)
	}
	if d, why := g.ReadDecision("/", "/proc/1/status"); d == engine.DecisionDeny {
		t.Errorf("/proc/1/status withheld: %s", why)
	}
}

// readTools are the names every runtime's read tools go by.
func readTools() []string {
	var out []string
	for name, kind := range toolKinds() {
		if kind == KindRead {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
