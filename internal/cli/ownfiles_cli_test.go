package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
)

// TestTheModelDoesNotReadKzsOwnFiles: kz run in the home directory, where
// the workspace holds kz's own directories and the home's credential
// files. The OS sandbox hides them from every command; kz's own tools,
// which run in kz's process, are held to the same by the gate, even in
// yolo: grep does not search them, and read_file and list_dir of them are
// refused without a person's yes (kz -p has none to give), while the
// person's files are searched and read. No checkpoint keeps them either.
func TestTheModelDoesNotReadKzsOwnFiles(t *testing.T) {
	sb := homeWorkspace(t)
	nativeCalls(t, sb,
		llmtest.Call{ID: "g1", Name: "grep", Args: `{"pattern":"` + needle + `"}`},
		llmtest.Call{ID: "r1", Name: "read_file", Args: `{"path":".local/share/kz/kz.db"}`},
		llmtest.Call{ID: "r2", Name: "read_file", Args: `{"path":".config/kz/config.toml"}`},
		llmtest.Call{ID: "l1", Name: "list_dir", Args: `{"path":".local/share/kz"}`},
		llmtest.Call{ID: "r4", Name: "read_file", Args: `{"path":".codex/auth.json"}`},
		llmtest.Call{ID: "r5", Name: "read_file", Args: `{"path":".config/gh/hosts.yml"}`},
		llmtest.Call{ID: "r3", Name: "read_file", Args: `{"path":"src/a.txt"}`})
	finished := sb.yoloTurn(t)
	if g := finished["g1"]; g.IsError || !strings.Contains(g.Output, "src/a.txt") || strings.Contains(g.Output, ".local") || strings.Contains(g.Output, ".config") ||
		strings.Contains(g.Output, ".codex") || strings.Contains(g.Output, "history") {
		t.Errorf("grep searched kz's own files or not the person's: %+v", g)
	}
	for _, id := range []string{"r1", "r2", "l1", "r4", "r5"} {
		if ev := finished[id]; !ev.IsError || strings.Contains(ev.Output, needle) || strings.Contains(ev.Output, "kz.db") {
			t.Errorf("%s read what the sandbox hides: %+v", id, ev)
		}
	}
	if r := finished["r3"]; r.IsError || !strings.Contains(r.Output, needle) {
		t.Errorf("the person's file was not read: %+v", r)
	}
	// Nor does a checkpoint keep any of them in the store: its baseline
	// of the workspace holds the person's file alone.
	e, st, _, _ := latestSession(t)
	base, err := st.Baseline(context.Background(), e.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, b := range base {
		paths = append(paths, b.Path)
	}
	if !slices.Equal(paths, []string{"src/a.txt"}) {
		t.Errorf("the baseline holds %q", paths)
	}
}

// needle is the text of homeWorkspace's files.
const needle = "NEEDLE-7f3a"

// homeWorkspace is kz run in the home directory: kz's XDG directories and
// the home's credential files in the workspace, beside the person's
// src/a.txt, every file holding the needle.
func homeWorkspace(t *testing.T) *sandbox {
	t.Helper()
	sb := newSandbox(t)
	kzDirsInWorkspace(t, sb)
	t.Setenv("HOME", sb.workspace)
	writeFiles(t, sb.workspace, map[string]string{
		"src/a.txt": needle + "\n",
		// Text files of kz's own, as its saved searches and settings are.
		".local/share/kz/notes.json": `{"seen":"` + needle + `"}`,
		".config/kz/extra.toml":      "# " + needle + "\n",
		// The home's credentials that only their place names.
		".codex/auth.json":     `{"token":"` + needle + `"}`,
		".config/gh/hosts.yml": "oauth_token: " + needle + "\n",
		".bash_history":        "export TOKEN=" + needle + "\n",
	})
	return sb
}

// yoloTurn runs one kz -p turn in yolo on the fake runtime nativeCalls
// set up and returns its finished tool calls by id.
func (sb *sandbox) yoloTurn(t *testing.T) map[string]engine.Event {
	t.Helper()
	out, errOut, code := sb.kz("-p", "find "+needle, "--runtime", "fake", "--model", "claude-sonnet-4-5",
		"--permission-mode", "yolo", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	finished := map[string]engine.Event{}
	for _, ev := range streamEvents(t, out) {
		if ev.Type == engine.EventToolCallFinished {
			finished[ev.ToolCallID] = ev
		}
	}
	return finished
}

// TestCommandsDoNotReadKzsOwnFiles: the same, run for real through kz's
// bash tool in yolo. A command that names kz's files or the home's
// credentials is refused by the gate; one that names them where the gate
// cannot see (built at run time), which yolo lets run, runs in the
// sandbox, which hides them; the person's file is read.
func TestCommandsDoNotReadKzsOwnFiles(t *testing.T) {
	if st := ossandbox.Probe(); !st.Full && os.Getenv("KZ_REQUIRE_SANDBOX") == "" {
		t.Skip("no full sandbox here (" + st.Reason + "); set KZ_REQUIRE_SANDBOX=1 to fail instead")
	}
	sb := homeWorkspace(t)
	bash := func(id, cmd string) llmtest.Call {
		in, err := json.Marshal(map[string]string{"command": cmd})
		if err != nil {
			t.Fatal(err)
		}
		return llmtest.Call{ID: id, Name: "bash", Args: string(in)}
	}
	hidden := []string{".codex/auth.json", ".config/gh/hosts.yml", ".bash_history", ".local/share/kz/notes.json", ".config/kz/extra.toml"}
	var calls []llmtest.Call
	for i, p := range hidden {
		// A script the analysis does not read names the path.
		writeFiles(t, sb.workspace, map[string]string{fmt.Sprintf("bin/show%d.sh", i): "cat " + p + "\n"})
		calls = append(calls, bash(fmt.Sprint("named", i), "cat "+p), bash(fmt.Sprint("built", i), fmt.Sprintf("sh bin/show%d.sh", i)))
	}
	writeFiles(t, sb.workspace, map[string]string{"bin/mine.sh": "cat src/a.txt\n"})
	calls = append(calls, bash("mine", "sh bin/mine.sh"))
	nativeCalls(t, sb, calls...)
	finished := sb.yoloTurn(t)
	const refused = "Permission to run bash was denied"
	for i, p := range hidden {
		// Named: the gate refuses it.
		if ev := finished[fmt.Sprint("named", i)]; !strings.HasPrefix(ev.Output, refused) || strings.Contains(ev.Output, needle) {
			t.Errorf("cat %s: %q, want the gate's refusal", p, ev.Output)
		}
		// Built: it runs, and the kernel keeps the file from it.
		if ev := finished[fmt.Sprint("built", i)]; strings.HasPrefix(ev.Output, refused) || !strings.Contains(ev.Output, "[exit code 1]") ||
			strings.Contains(ev.Output, needle) {
			t.Errorf("a script that reads %s: %q, want it run and kept from the file", p, ev.Output)
		}
	}
	if ev := finished["mine"]; !strings.Contains(ev.Output, needle) {
		t.Errorf("the person's file was not read: %+v", ev)
	}
}
