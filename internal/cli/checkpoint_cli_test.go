package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/testfs"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/workspace"
)

// nativeCalls configures a native runtime on a fake Anthropic API that
// makes the given tool calls, one request each, then ends the turn.
func nativeCalls(t *testing.T, sb *sandbox, calls ...llmtest.Call) {
	t.Helper()
	var replies []llmtest.Reply
	for _, c := range calls {
		replies = append(replies, llmtest.Reply{Calls: []llmtest.Call{c}, Usage: engine.Usage{InputTokens: 10, OutputTokens: 5}})
	}
	replies = append(replies, llmtest.Reply{Text: "done", Usage: engine.Usage{InputTokens: 10, OutputTokens: 5}})
	fake := llmtest.New(t, llm.ProviderAnthropic, replies...)
	t.Setenv("KZ_FAKE_KEY", "sk-test")
	sb.userConfig(fmt.Sprintf("[runtimes.fake]\nkind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_FAKE_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", fake.URL))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfs.Write(t, dir, files)
}

// wantFiles checks the content of files; "" means the file must not exist.
func wantFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case want == "" && !os.IsNotExist(err):
			t.Errorf("%s exists (%q, %v), want it gone", name, b, err)
		case want != "" && (err != nil || string(b) != want):
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
}

func (sb *sandbox) turn(prompt string) {
	sb.t.Helper()
	out, errOut, code := sb.kz("-p", prompt, "--runtime", "fake", "--model", "claude-sonnet-4-5", "--permission-mode", "yolo", "--output-format", "stream-json")
	if code != 0 {
		sb.t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, ev := range streamEvents(sb.t, out) {
		if ev.Type == engine.EventError {
			sb.t.Fatalf("error event: %s\n%s", ev.Text, out)
		}
	}
}

// TestUndoTakesBackANativeWriteFile: kz's own write_file is a change kz
// undo takes back, file by file, after --list said what it would do.
func TestUndoTakesBackANativeWriteFile(t *testing.T) {
	sb := newSandbox(t)
	writeFiles(t, sb.workspace, map[string]string{"notes.txt": "old\n", "keep.txt": "keep\n"})
	nativeCalls(t, sb,
		llmtest.Call{ID: "w1", Name: "write_file", Args: `{"path":"notes.txt","content":"new\n"}`},
		llmtest.Call{ID: "w2", Name: "write_file", Args: `{"path":"sub/fresh.txt","content":"fresh\n"}`})
	sb.turn("rewrite the notes")
	wantFiles(t, sb.workspace, map[string]string{"notes.txt": "new\n", "sub/fresh.txt": "fresh\n"})

	out, errOut, code := sb.kz("undo", "--list")
	if code != 0 || !strings.Contains(out, "write_file call of turn 1") || !strings.Contains(out, "sub/fresh.txt (remove") || strings.Contains(out, "notes.txt") {
		t.Fatalf("undo --list: %d %s %s", code, out, errOut)
	}
	// Each call is its own checkpoint: the first undo takes back the
	// newer write, the second the older one.
	if out, errOut, code := sb.kz("undo"); code != 0 || !strings.Contains(out, "sub/fresh.txt") {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	wantFiles(t, sb.workspace, map[string]string{"notes.txt": "new\n", "sub/fresh.txt": ""})
	if out, errOut, code := sb.kz("undo"); code != 0 || !strings.Contains(out, "notes.txt") {
		t.Fatalf("second undo: %d %s %s", code, out, errOut)
	}
	wantFiles(t, sb.workspace, map[string]string{"notes.txt": "old\n", "keep.txt": "keep\n"})
	if _, errOut, code := sb.kz("undo"); code != 1 || !strings.Contains(errOut, "no change to undo") {
		t.Fatalf("third undo: %d %s", code, errOut)
	}
}

// TestUndoTakesBackAShellCommand: one shell command creates, edits and
// deletes files that no file tool named; undo puts all three back. The
// scan after the call finds them, and the baseline holds what they were.
func TestUndoTakesBackAShellCommand(t *testing.T) {
	sb := newSandbox(t)
	before := map[string]string{"tracked.txt": "a line\n", "other.txt": "keep me\n", "big/untouched.txt": "u\n", ".gitignore": "build/\n"}
	writeFiles(t, sb.workspace, before)
	nativeCalls(t, sb, llmtest.Call{ID: "b1", Name: "bash", Args: `{"command":"sh -c 'echo x > new.txt; sed -i s/a/b/ tracked.txt; rm other.txt'"}`})
	sb.turn("shuffle the files")
	wantFiles(t, sb.workspace, map[string]string{"new.txt": "x\n", "tracked.txt": "b line\n", "other.txt": ""})

	out, errOut, code := sb.kz("undo", "--list")
	for _, want := range []string{"bash call of turn 1", "new.txt (remove", "other.txt (put back", "tracked.txt (restore"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("undo --list lacks %q: %d %s %s", want, code, out, errOut)
		}
	}
	if out, errOut, code := sb.kz("undo"); code != 0 {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	before["new.txt"] = ""
	wantFiles(t, sb.workspace, before)
}

// TestUndoLeavesOutKzsOwnFiles: with kz's config, data, state and cache
// directories inside the workspace (kz run in the home directory), its
// store, log and caches, which it writes during every turn, are in no
// checkpoint. Undo lists and takes back only what the turns' calls
// changed; before, it named the store's write-ahead log and refused to
// undo anything, since kz had written it since.
func TestUndoLeavesOutKzsOwnFiles(t *testing.T) {
	sb := newSandbox(t)
	kzDirsInWorkspace(t, sb)
	writeFiles(t, sb.workspace, map[string]string{"notes.txt": "old\n"})
	nativeCalls(t, sb,
		llmtest.Call{ID: "w1", Name: "write_file", Args: `{"path":"notes.txt","content":"new\n"}`},
		llmtest.Call{ID: "b1", Name: "bash", Args: `{"command":"echo made > made.txt"}`})
	sb.turn("write the notes")
	wantFiles(t, sb.workspace, map[string]string{"notes.txt": "new\n", "made.txt": "made\n"})
	if _, err := os.Stat(filepath.Join(sb.data, "kz", "kz.db")); err != nil {
		t.Fatalf("the store is not in the workspace: %v", err)
	}
	for _, want := range []string{"made.txt", "notes.txt"} {
		out, errOut, code := sb.kz("undo", "--list")
		if code != 0 || !strings.Contains(out, want) || strings.Contains(out, ".local") || strings.Contains(out, ".config") || strings.Contains(out, ".cache") {
			t.Fatalf("undo --list, %s next: %d %s %s", want, code, out, errOut)
		}
		if out, errOut, code := sb.kz("undo"); code != 0 || !strings.Contains(out, want) {
			t.Fatalf("undo of %s: %d %s %s", want, code, out, errOut)
		}
	}
	wantFiles(t, sb.workspace, map[string]string{"notes.txt": "old\n", "made.txt": ""})
	if _, errOut, code := sb.kz("undo"); code != 1 || !strings.Contains(errOut, "no change to undo") {
		t.Fatalf("a third undo: %d %s", code, errOut)
	}
	// Not only left out when read: the store holds no checkpoint or
	// baseline entry of kz's own files.
	e, st, _, si := latestSession(t)
	cps, err := st.Checkpoints(context.Background(), si.ID, e.Workspace, true)
	if err != nil || len(cps) != 2 {
		t.Fatalf("checkpoints: %d, %v", len(cps), err)
	}
	paths := []string{}
	for _, cp := range cps {
		for _, f := range cp.Files {
			paths = append(paths, f.Path)
		}
	}
	base, err := st.Baseline(context.Background(), e.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range base {
		paths = append(paths, b.Path)
	}
	for _, p := range paths {
		if strings.HasPrefix(p, ".") {
			t.Errorf("the store holds kz's own %s", p)
		}
	}
}

// kzDirsInWorkspace puts kz's four XDG directories in the workspace, as
// they are when kz runs in the home directory.
func kzDirsInWorkspace(t *testing.T, sb *sandbox) {
	t.Helper()
	sb.config, sb.data = filepath.Join(sb.workspace, ".config"), filepath.Join(sb.workspace, ".local", "share")
	sb.state, sb.cache = filepath.Join(sb.workspace, ".local", "state"), filepath.Join(sb.workspace, ".cache")
	t.Setenv("XDG_CONFIG_HOME", sb.config)
	t.Setenv("XDG_DATA_HOME", sb.data)
	t.Setenv("XDG_STATE_HOME", sb.state)
	t.Setenv("XDG_CACHE_HOME", sb.cache)
}

// TestUndoRefusesAfterAnOutsideEdit: a file edited after the change (by
// the person, outside kz) is never overwritten; undo names it.
func TestUndoRefusesAfterAnOutsideEdit(t *testing.T) {
	sb := newSandbox(t)
	writeFiles(t, sb.workspace, map[string]string{"a.txt": "one\n", "b.txt": "two\n"})
	nativeCalls(t, sb, llmtest.Call{ID: "b1", Name: "bash", Args: `{"command":"echo changed > a.txt && echo changed > b.txt"}`})
	sb.turn("change both")
	writeFiles(t, sb.workspace, map[string]string{"b.txt": "my own edit\n"})
	_, errOut, code := sb.kz("undo")
	if code == 0 || !strings.Contains(errOut, "b.txt") || strings.Contains(errOut, "a.txt") {
		t.Fatalf("undo after an outside edit: exit %d %s", code, errOut)
	}
	wantFiles(t, sb.workspace, map[string]string{"a.txt": "changed\n", "b.txt": "my own edit\n"})
}

// TestRewindFilesAcrossTwoTurns: two turns change the same file (a
// write_file, then a shell command that also creates and deletes files);
// a rewind to before turn 2 restores turn 1's result, and a rewind to
// before turn 1 the files as they were, all from the store.
func TestRewindFilesAcrossTwoTurns(t *testing.T) {
	sb := newSandbox(t)
	writeFiles(t, sb.workspace, map[string]string{"a.txt": "v0\n", "gone.txt": "old\n"})
	u := engine.Usage{InputTokens: 10, OutputTokens: 5}
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_file", Args: `{"path":"a.txt","content":"v1\n"}`}}, Usage: u},
		llmtest.Reply{Text: "turn one done", Usage: u},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "b2", Name: "bash", Args: `{"command":"echo v2 > a.txt; echo n > b.txt; rm gone.txt"}`}}, Usage: u},
		llmtest.Reply{Text: "turn two done", Usage: u})
	t.Setenv("KZ_FAKE_KEY", "sk-test")
	sb.userConfig(fmt.Sprintf("[runtimes.fake]\nkind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_FAKE_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", fake.URL))
	sb.turn("first")
	_, _, code := sb.kz("-p", "second", "--continue", "--runtime", "fake", "--model", "claude-sonnet-4-5", "--permission-mode", "yolo")
	if code != 0 {
		t.Fatalf("second turn: exit %d", code)
	}
	wantFiles(t, sb.workspace, map[string]string{"a.txt": "v2\n", "b.txt": "n\n", "gone.txt": ""})

	ctx := context.Background()
	e, st, ws, si := latestSession(t)
	pts, err := e.RewindPoints(ctx, st, ws, si.ID)
	if err != nil || len(pts) != 2 || strings.Join(pts[0].Files, ",") != "a.txt" || strings.Join(pts[1].Files, ",") != "a.txt,b.txt,gone.txt" {
		t.Fatalf("rewind points %+v %v", pts, err)
	}
	if _, err := e.RewindFiles(ctx, st, ws, si.ID, 2); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, sb.workspace, map[string]string{"a.txt": "v1\n", "b.txt": "", "gone.txt": "old\n"})
	if _, err := e.RewindFiles(ctx, st, ws, si.ID, 1); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, sb.workspace, map[string]string{"a.txt": "v0\n", "b.txt": "", "gone.txt": "old\n"})
}

// TestUndoOfANamedSession: --session takes a session other than the one
// of the newest change here; an unknown one is an error that names it.
func TestUndoOfANamedSession(t *testing.T) {
	sb := newSandbox(t)
	writeFiles(t, sb.workspace, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
	u := engine.Usage{InputTokens: 10, OutputTokens: 5}
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_file", Args: `{"path":"a.txt","content":"a1\n"}`}}, Usage: u},
		llmtest.Reply{Text: "one", Usage: u},
		llmtest.Reply{Calls: []llmtest.Call{{ID: "w2", Name: "write_file", Args: `{"path":"b.txt","content":"b1\n"}`}}, Usage: u},
		llmtest.Reply{Text: "two", Usage: u})
	t.Setenv("KZ_FAKE_KEY", "sk-test")
	sb.userConfig(fmt.Sprintf("[runtimes.fake]\nkind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_FAKE_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", fake.URL))
	run := func(prompt string) string {
		out, errOut, code := sb.kz("-p", prompt, "--runtime", "fake", "--model", "claude-sonnet-4-5", "--permission-mode", "yolo", "--output-format", "stream-json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return streamEvents(t, out)[0].SessionID
	}
	first := run("first session")
	run("second session")
	if out, errOut, code := sb.kz("undo", "--list", "--session", first); code != 0 || !strings.Contains(out, "a.txt") || strings.Contains(out, "b.txt") {
		t.Fatalf("undo --list --session: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := sb.kz("undo", "--session", first); code != 0 {
		t.Fatalf("undo --session: %d %s", code, errOut)
	}
	wantFiles(t, sb.workspace, map[string]string{"a.txt": "a0\n", "b.txt": "b1\n"})
	if _, errOut, code := sb.kz("undo", "--session", "no-such-session"); code == 0 || !strings.Contains(errOut, "no-such-session") {
		t.Fatalf("unknown session: %d %s", code, errOut)
	}
	if _, errOut, code := sb.kz("undo", "--session", first, first); code != 2 {
		t.Fatalf("an id and --session: %d %s", code, errOut)
	}
}

// TestRewindAcrossAnAppliedProposal: a patch proposal applied in a turn is
// in that turn's checkpoint, so /rewind to before an earlier turn takes
// it back with the rest (and drops it from the change log, so that kz
// undo does not try it again); rewinding only the proposal's turn puts
// back what the turn before left. An edit made outside kz after the
// proposal makes the rewind refuse, naming the file, and change nothing
// (turn 0 below: the edit, then a rewind to before turn 1).
func TestRewindAcrossAnAppliedProposal(t *testing.T) {
	for _, to := range []int64{1, 2, 0} {
		t.Run(fmt.Sprint("turn ", to), func(t *testing.T) {
			sb := newSandbox(t)
			writeFiles(t, sb.workspace, map[string]string{"a.txt": "v0\n"})
			u := engine.Usage{InputTokens: 10, OutputTokens: 5}
			fake := llmtest.New(t, llm.ProviderAnthropic,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "w1", Name: "write_file", Args: `{"path":"a.txt","content":"v1\n"}`}}, Usage: u},
				llmtest.Reply{Text: "turn one done", Usage: u})
			t.Setenv("KZ_FAKE_KEY", "sk-test")
			sb.userConfig(fmt.Sprintf("[runtimes.fake]\nkind = \"native\"\nprovider = \"anthropic\"\nbase_url = %q\napi_key_env = \"KZ_FAKE_KEY\"\nmodels = [\"claude-sonnet-4-5\"]\n", fake.URL))
			sb.turn("first")
			script := filepath.Join(t.TempDir(), "propose.jsonl")
			body := `{"kz_script": 1, "model": "text-only", "capabilities": ["text_completion", "streaming_text"]}` + "\n" +
				`{"type": "assistant_message", "text": "SUMMARY: bump\n\na.txt\n<<<<<<< SEARCH\nv1\n=======\nv2\n>>>>>>> REPLACE\n"}` + "\n"
			if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := sb.kz("-p", "bump it", "--continue", "--mode", "patch-proposal", "--runtime", "scripted", "--script", script,
				"--permission-mode", "accept-edits")
			if code != 0 {
				t.Fatalf("proposal turn: exit %d: %s", code, errOut)
			}
			wantFiles(t, sb.workspace, map[string]string{"a.txt": "v2\n"})

			ctx := context.Background()
			e, st, ws, si := latestSession(t)
			if chg, err := st.LastChangeOfSessionIn(ctx, si.ID, ws.Dir()); err != nil || chg.ID == "" {
				t.Fatalf("the proposal is not in the change log: %+v %v", chg, err)
			}
			if pts, err := e.RewindPoints(ctx, st, ws, si.ID); err != nil || len(pts) != 2 ||
				strings.Join(pts[0].Files, ",") != "a.txt" || strings.Join(pts[1].Files, ",") != "a.txt" {
				t.Fatalf("rewind points %+v %v: the proposal's turn must list its file", pts, err)
			}
			if to == 0 {
				writeFiles(t, sb.workspace, map[string]string{"a.txt": "mine\n"})
				if _, err := e.RewindFiles(ctx, st, ws, si.ID, 1); err == nil || !strings.Contains(err.Error(), "a.txt") {
					t.Fatalf("a rewind over an outside edit: %v", err)
				}
				wantFiles(t, sb.workspace, map[string]string{"a.txt": "mine\n"})
				if chg, err := st.LastChangeOfSessionIn(ctx, si.ID, ws.Dir()); err != nil || chg.ID == "" {
					t.Fatalf("a refused rewind dropped the proposal: %+v %v", chg, err)
				}
				return
			}
			if _, err := e.RewindFiles(ctx, st, ws, si.ID, to); err != nil {
				t.Fatal(err)
			}
			want := map[int64]string{1: "v0\n", 2: "v1\n"}[to]
			wantFiles(t, sb.workspace, map[string]string{"a.txt": want})
			if chg, err := st.LastChangeOfSessionIn(ctx, si.ID, ws.Dir()); err != nil || chg.ID != "" {
				t.Fatalf("the rewound proposal stays in the change log: %+v %v", chg, err)
			}
		})
	}
}

// latestSession opens, as kz does, the store and workspace of the test's
// sandbox and finds its latest session; all are closed with the test.
func latestSession(t *testing.T) (*app.Env, *store.Store, *workspace.Workspace, store.SessionInfo) {
	t.Helper()
	ctx := context.Background()
	e, err := app.Load("")
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.OpenStore(ctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	si, err := st.LatestSession(ctx, e.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(e.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return e, st, ws, si
}
