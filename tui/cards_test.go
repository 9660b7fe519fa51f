package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/eventlog"
)

// cardLines folds events into a transcript and returns each tool card as
// "status verb arg", in transcript order.
func cardLines(evs []engine.Event, workspace string) []string {
	tr := newTranscript()
	tr.workspace = workspace
	for _, ev := range evs {
		tr.apply(ev)
	}
	var out []string
	for _, it := range tr.items {
		if it.kind == kindTool {
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s", it.card.status, it.card.tool, oneLine(it.card.summary))))
		}
	}
	return out
}

// Every runtime's recorded session (testdata/events, recorded from the
// real protocol samples by each runtime's TestRecordedEvents) gives one
// card per tool call, titled from its normalized input, and no denied
// call is a success: Claude Code and Codex send tool_call_finished before
// command_finished, Gemini carries no exit code.
func TestCardsOfRecordedSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"claude-code.approval-allow", []string{"ok Bash echo hi > out.txt"}},
		{"claude-code.approval-deny", []string{"denied Bash echo hi > out.txt"}},
		{"codex.approval-allow", []string{"ok Bash echo hello-from-fake > hello.txt && cat hello.txt", "ok Patch added_by_patch.txt"}},
		{"codex.approval-deny", []string{"denied Bash echo hello-from-fake > hello.txt && cat hello.txt", "denied Patch added_by_patch.txt"}},
		{"gemini.approval-allow", []string{"ok Bash echo hello-from-fake > hello.txt && cat hello.txt", "ok Write written_by_fake.txt"}},
		{"gemini.approval-deny", []string{"denied Bash echo hello-from-fake > hello.txt && cat hello.txt", "denied Write written_by_fake.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := eventlog.Load(eventlog.Path("..", tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if got := cardLines(evs, eventlog.Workspace); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("cards\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func exit(n int) *int { return &n }

// Event orders every runtime produces, and some no runtime produces yet,
// each with the one card it must give.
func TestCardsOfEventOrders(t *testing.T) {
	const id = "c1"
	bashIn := []byte(`{"command":"echo one >> log.txt"}`)
	started := engine.Event{Type: engine.EventToolCallStarted, TurnID: 1, ToolCallID: id, Tool: "Bash", Input: bashIn}
	cmdStarted := engine.Event{Type: engine.EventCommandStarted, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt"}
	allow := engine.Event{Type: engine.EventPermissionDecided, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt", Decision: engine.DecisionAllow, Stage: "user"}
	deny := engine.Event{Type: engine.EventPermissionDecided, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt", Decision: engine.DecisionDeny, Stage: "user"}
	finishedOK := engine.Event{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Output: "(no output)"}
	finishedErr := engine.Event{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Output: "kz denied this tool call.", IsError: true}
	cmdOK := engine.Event{Type: engine.EventCommandFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt", ExitCode: exit(0)}
	cmdFail := engine.Event{Type: engine.EventCommandFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt", ExitCode: exit(2), IsError: true}
	cmdNoCode := engine.Event{Type: engine.EventCommandFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt"}
	cmdDenied := engine.Event{Type: engine.EventCommandFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt", Output: "kz denied this tool call.", IsError: true}
	progress := engine.Event{Type: engine.EventToolCallProgress, TurnID: 1, ToolCallID: id, Tool: "Bash", Output: "one\n"}
	// What the session emits for a call the turn cut short, then the turn's end.
	cutCmd := engine.Event{Type: engine.EventCommandFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Command: "echo one >> log.txt", Output: engine.InterruptedNotRerun, IsError: true}
	cutCall := engine.Event{Type: engine.EventToolCallFinished, TurnID: 1, ToolCallID: id, Tool: "Bash", Status: engine.ToolStatusInterrupted, Output: engine.InterruptedNotRerun, IsError: true}
	interrupted := engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: string(engine.StatusInterrupted)}
	complete := engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: string(engine.StatusComplete)}
	const title = "Bash echo one >> log.txt"

	for _, tc := range []struct {
		name string
		evs  []engine.Event
		want string
	}{
		{"native: command_finished before tool_call_finished", []engine.Event{started, allow, cmdStarted, progress, cmdOK, finishedOK, complete}, "ok " + title},
		{"claude code: tool_call_finished before command_finished", []engine.Event{started, cmdStarted, allow, finishedOK, cmdOK, complete}, "ok " + title},
		{"claude code: denied, finished before command_finished", []engine.Event{started, cmdStarted, deny, finishedErr, cmdDenied, complete}, "denied " + title},
		{"codex: declined, no exit code", []engine.Event{started, cmdStarted, deny, finishedErr, cmdNoCode, complete}, "denied " + title},
		{"gemini: allowed, no exit code, result without error", []engine.Event{started, cmdStarted, allow, finishedOK, cmdNoCode, complete}, "ok " + title},
		{"a failed command whose result is not an error", []engine.Event{started, cmdStarted, finishedOK, cmdFail, complete}, "failed " + title},
		{"command events without a tool call, exit 0", []engine.Event{cmdStarted, cmdOK, complete}, "ok " + title},
		{"command events without a tool call, no exit code", []engine.Event{cmdStarted, cmdNoCode, complete}, "done " + title},
		{"command events without a tool call, failed", []engine.Event{cmdStarted, cmdFail}, "failed " + title},
		{"command_finished alone", []engine.Event{cmdNoCode}, "done " + title},
		{"decision before the call", []engine.Event{deny, started, finishedErr, complete}, "denied " + title},
		{"command_started before tool_call_started", []engine.Event{cmdStarted, started, allow, cmdOK, finishedOK}, "ok " + title},
		{"a denial reported after the result", []engine.Event{started, finishedErr, deny, complete}, "denied " + title},
		{"a denial reported after a successful-looking result", []engine.Event{started, cmdStarted, finishedOK, cmdNoCode, deny}, "denied " + title},
		{"interrupt mid-call, closed by the session", []engine.Event{started, allow, cmdStarted, progress, cutCmd, cutCall, interrupted}, "interrupted " + title},
		{"interrupt mid-call, nothing closed", []engine.Event{started, allow, cmdStarted, progress, interrupted}, "interrupted " + title},
		{"interrupt while the permission is asked", []engine.Event{started, cmdStarted, interrupted}, "interrupted " + title},
		{"still running", []engine.Event{started, cmdStarted, allow, progress}, "running " + title},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cardLines(tc.evs, "")
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("cards %q, want one: %q", got, tc.want)
			}
		})
	}
}

// permutations calls fn with every order of evs.
func permutations(evs []engine.Event, fn func([]engine.Event)) {
	var rec func(int)
	rec = func(k int) {
		if k == len(evs) {
			fn(append([]engine.Event(nil), evs...))
			return
		}
		for i := k; i < len(evs); i++ {
			evs[k], evs[i] = evs[i], evs[k]
			rec(k + 1)
			evs[k], evs[i] = evs[i], evs[k]
		}
	}
	rec(0)
}

// Whatever the order the events of one call arrive in, they make one card,
// and its status depends only on what the events say.
func TestCardsInAnyOrder(t *testing.T) {
	const id = "x1"
	in := []byte(`{"file_path":"/w/calc.py","old_string":"a","new_string":"b"}`)
	base := []engine.Event{
		{Type: engine.EventToolCallStarted, ToolCallID: id, Tool: "Edit", Input: in},
		{Type: engine.EventFileEdited, ToolCallID: id, Tool: "Edit", Path: "calc.py", Diff: "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-a\n+b\n"},
	}
	for _, tc := range []struct {
		name string
		more []engine.Event
		want string
	}{
		{"allowed and done", []engine.Event{
			{Type: engine.EventPermissionDecided, ToolCallID: id, Tool: "Edit", Decision: engine.DecisionAllow},
			{Type: engine.EventToolCallFinished, ToolCallID: id, Tool: "Edit", Output: "edited"},
		}, "ok Edit calc.py"},
		{"denied", []engine.Event{
			{Type: engine.EventPermissionDecided, ToolCallID: id, Tool: "Edit", Decision: engine.DecisionDeny},
			{Type: engine.EventToolCallFinished, ToolCallID: id, Tool: "Edit", Output: "denied", IsError: true},
		}, "denied Edit calc.py"},
		{"failed", []engine.Event{
			{Type: engine.EventPermissionDecided, ToolCallID: id, Tool: "Edit", Decision: engine.DecisionAllow},
			{Type: engine.EventToolCallFinished, ToolCallID: id, Tool: "Edit", Output: "no match", IsError: true},
		}, "failed Edit calc.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			permutations(append(append([]engine.Event(nil), base...), tc.more...), func(evs []engine.Event) {
				n++
				if got := cardLines(evs, "/w"); len(got) != 1 || got[0] != tc.want {
					t.Errorf("order %v: cards %q, want one: %q", types(evs), got, tc.want)
				}
			})
			if n != 24 {
				t.Fatalf("%d orders tried", n)
			}
		})
	}
}

func types(evs []engine.Event) []engine.EventType {
	out := make([]engine.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// A runtime that numbers its calls per turn (the scripted one does) gets a
// new card for the same id in the next turn.
func TestCardsOfReusedIDs(t *testing.T) {
	in := []byte(`{"path":"main.go"}`)
	var evs []engine.Event
	for turn := int64(1); turn <= 2; turn++ {
		evs = append(evs,
			engine.Event{Type: engine.EventToolCallStarted, TurnID: turn, ToolCallID: "t1", Tool: "read_file", Input: in},
			engine.Event{Type: engine.EventToolCallFinished, TurnID: turn, ToolCallID: "t1", Tool: "read_file", Output: "package main"})
	}
	evs = append(evs,
		engine.Event{Type: engine.EventToolCallStarted, TurnID: 2, ToolCallID: "t1", Tool: "read_file", Input: in},
		engine.Event{Type: engine.EventToolCallFinished, TurnID: 2, ToolCallID: "t1", Tool: "read_file", IsError: true})
	// An id started again in its own turn while its first call runs: the
	// first card is still closed with the turn.
	evs = append(evs,
		engine.Event{Type: engine.EventToolCallStarted, TurnID: 3, ToolCallID: "t9", Tool: "bash", Input: []byte(`{"command":"sleep 9"}`)},
		engine.Event{Type: engine.EventToolCallStarted, TurnID: 3, ToolCallID: "t9", Tool: "bash", Input: []byte(`{"command":"sleep 9"}`)},
		engine.Event{Type: engine.EventFinalResult, TurnID: 3, Status: string(engine.StatusInterrupted)})
	want := []string{"ok Read main.go", "ok Read main.go", "failed Read main.go", "interrupted Bash sleep 9", "interrupted Bash sleep 9"}
	if got := cardLines(evs, ""); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cards %q, want %q", got, want)
	}
}

// Titles are computed from every runtime's tool names and input shapes;
// none is raw JSON, and paths are relative to the workspace.
func TestCardTitles(t *testing.T) {
	const ws = "/home/me/proj"
	for _, tc := range []struct {
		tool, input, command string
		paths                []string
		want                 string
	}{
		// kz's own tools.
		{"bash", `{"command":"go test ./..."}`, "", nil, "Bash go test ./..."},
		{"read_file", `{"path":"main.go"}`, "", nil, "Read main.go"},
		{"write_file", `{"path":"/home/me/proj/cmd/x.go","content":"…"}`, "", nil, "Write cmd/x.go"},
		{"edit_file", `{"path":"calc.py","old":"a","new":"b"}`, "", nil, "Edit calc.py"},
		{"list_dir", `{"path":"."}`, "", nil, "List ."},
		{"glob", `{"pattern":"**/*.go"}`, "", nil, "Glob **/*.go"},
		{"grep", `{"pattern":"TODO","path":"."}`, "", nil, "Search TODO"},
		// Claude Code.
		{"Bash", `{"command":"echo one >> log.txt","description":"append"}`, "", nil, "Bash echo one >> log.txt"},
		{"Edit", `{"file_path":"/home/me/proj/calc.py","old_string":"a","new_string":"b"}`, "", nil, "Edit calc.py"},
		{"MultiEdit", `{"file_path":"/home/me/proj/a.go","edits":[]}`, "", nil, "Edit a.go"},
		{"Read", `{"file_path":"/home/me/proj/main.go"}`, "", nil, "Read main.go"},
		{"Read", `{"file_path":"/etc/hosts"}`, "", nil, "Read /etc/hosts"},
		{"Write", `{"file_path":"/home/me/proj/out.txt","content":"hi"}`, "", nil, "Write out.txt"},
		{"Glob", `{"pattern":"*.md"}`, "", nil, "Glob *.md"},
		{"Grep", `{"pattern":"func main"}`, "", nil, "Search func main"},
		{"WebFetch", `{"url":"https://go.dev","prompt":"summarize"}`, "", nil, "Fetch https://go.dev"},
		{"WebSearch", `{"query":"bubbletea v2"}`, "", nil, "WebSearch bubbletea v2"},
		{"Task", `{"description":"explore","prompt":"…"}`, "", nil, "Task explore"},
		{"TodoWrite", `{"todos":[{"content":"x"}]}`, "", nil, "Todo"},
		// Codex.
		{"shell", `{"command":"/bin/bash -lc 'echo five >> log.txt'","cwd":"/home/me/proj"}`, "echo five >> log.txt", nil, "Bash echo five >> log.txt"},
		{"apply_patch", `{"changes":[{"path":"/home/me/proj/a.txt","kind":{"type":"add"}}]}`, "", []string{"/home/me/proj/a.txt"}, "Patch a.txt"},
		{"apply_patch", `{"changes":[{"path":"/home/me/proj/a.txt"},{"path":"/home/me/proj/b.txt"}]}`, "", nil, "Patch a.txt, b.txt"},
		{"mcpToolCall", `{"type":"mcpToolCall","server":"docs","tool":"lookup","status":"inProgress"}`, "", nil, "MCP docs/lookup"},
		{"webSearch", `{"type":"webSearch","query":"go 1.26"}`, "", nil, "WebSearch go 1.26"},
		// Gemini CLI over ACP.
		{"run_shell_command", `{"kind":"execute","locations":[],"title":"echo five >> log.txt"}`, "echo five >> log.txt", nil, "Bash echo five >> log.txt"},
		{"run_shell_command", `{"kind":"execute","locations":[],"title":"echo five >> log.txt"}`, "", nil, "Bash echo five >> log.txt"},
		{"write_file", `{"kind":"edit","locations":[{"path":"/home/me/proj/w.txt"}],"title":"Writing to w.txt"}`, "", []string{"/home/me/proj/w.txt"}, "Write w.txt"},
		{"replace", `{"kind":"edit","locations":[{"path":"/home/me/proj/calc.py"}],"title":"calc.py: a => b"}`, "", nil, "Edit calc.py"},
		{"read_file", `{"kind":"read","locations":[{"path":"/home/me/proj/main.go"}],"title":"main.go"}`, "", nil, "Read main.go"},
		{"custom_tool", `{"kind":"search","locations":[],"title":"Finding things"}`, "", nil, "Search Finding things"},
		{"custom_tool", `{"kind":"other","locations":[],"title":"Doing something"}`, "", nil, "custom_tool Doing something"},
		// No field a person recognises: the verb alone, never JSON.
		{"mystery", `{"a":1,"b":[2]}`, "", nil, "mystery"},
		{"", ``, "", nil, "tool"},
	} {
		got := titleOf(tc.tool, []byte(tc.input), tc.command, tc.paths, ws)
		if s := strings.TrimSpace(got.verb + " " + got.arg); s != tc.want {
			t.Errorf("%s %s: title %q, want %q", tc.tool, tc.input, s, tc.want)
		}
	}
}
