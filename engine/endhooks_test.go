package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/hooks"
)

// toolScript is a CLI runtime's turn: a shell call kz's gate judged, a
// read the agent ran without asking, a call that failed, then its answer.
const toolScript = `{"kz_script":1,"model":"m1","capabilities":["text_completion","streaming_text","native_tool_loop","filesystem_read","filesystem_edit","shell"]}
{"type":"tool_call_started","tool_call_id":"t1","tool":"Bash","input":{"command":"make test","description":"run tests"}}
{"type":"permission_requested","tool":"Bash","command":"make test","tool_call_id":"t1"}
{"type":"tool_call_finished","tool_call_id":"t1","tool":"Bash","output":"ok 12 tests"}
{"type":"tool_call_started","tool_call_id":"t2","tool":"Read","input":{"file_path":"gen/api.go"}}
{"type":"tool_call_finished","tool_call_id":"t2","tool":"Read","output":"package api"}
{"type":"tool_call_started","tool_call_id":"t3","tool":"Bash","input":{"command":"false"}}
{"type":"tool_call_finished","tool_call_id":"t3","tool":"Bash","output":"exit 1","is_error":true}
{"type":"assistant_message","text":"done"}
`

func hookRunner(t *testing.T, dir string, c hooks.Config) *hooks.Runner {
	t.Helper()
	r, err := hooks.New(hooks.Options{Workspace: dir, User: c})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hookNotices(evs []engine.Event) []engine.Event {
	var out []engine.Event
	for _, ev := range evs {
		if ev.Type == engine.EventNotice && ev.Stage == engine.StageHook {
			out = append(out, ev)
		}
	}
	return out
}

// The PostToolUse hooks run for a runtime that does not run them itself
// (a CLI agent, here the scripted one) after each of its calls that
// succeeded, with the call's input and tool_response; what they say is
// stored as a notice before the turn's final result, since the agent
// cannot be told mid-turn. A failed call runs none.
func TestPostToolUseHooksForACLIRuntime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "post")
	r := hookRunner(t, dir, hooks.Config{"PostToolUse": {
		{Matcher: "Bash", Hooks: []hooks.Command{{Command: `cat >> ` + log + `; echo >> ` + log + `; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"coverage fell to 61%"}}'`}}},
		{Matcher: "Read", Hooks: []hooks.Command{{Command: `echo generated file, edit the template >&2; exit 2`}}},
	}})
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "cli", toolScript), "m1")}, Hooks: r, Workspace: dir,
		PermissionMode: engine.PermissionYolo})
	final, err := s.RunTurn(context.Background(), "test it")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1 {
		t.Fatalf("the Bash hook ran %d times, want once (the failed call runs none): %q", len(lines), lines)
	}
	for _, want := range []string{`"hook_event_name":"PostToolUse"`, `"tool_name":"Bash"`, `"command":"make test"`,
		`"tool_response":{"output":"ok 12 tests"}`, `"tool_use_id":"t1"`, `"kz_runtime":"cli"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("hook input lacks %s: %s", want, lines[0])
		}
	}
	evs := j.all()
	n := hookNotices(evs)
	if len(n) != 2 || n[0].ToolCallID != "t1" || !strings.Contains(n[0].Text, "coverage fell to 61%") ||
		n[1].ToolCallID != "t2" || !strings.Contains(n[1].Text, "generated file, edit the template") {
		t.Fatalf("notices %+v", n)
	}
	if last := evs[len(evs)-1]; last.Type != engine.EventFinalResult || last.Seq < n[1].Seq {
		t.Errorf("the notices must be stored before the final result: last %+v", last)
	}
}

// A CLI runtime's turn that ends complete runs the Stop hooks for their
// side effects; a block cannot make the agent continue, so it becomes a
// notice and the turn ends as the agent ended it. A turn that fails runs
// none.
func TestStopHooksAfterACLIRuntimesTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "stop-in")
	r := hookRunner(t, dir, hooks.Config{"Stop": {{Hooks: []hooks.Command{{Command: `cat > ` + in + `; echo '{"decision":"block","reason":"the changelog is not updated"}'`}}}}})
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "cli", hello), "m1")}, Hooks: r, Workspace: dir})
	final, err := s.RunTurn(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"stop_hook_active":false`) || !strings.Contains(string(b), `"hook_event_name":"Stop"`) {
		t.Errorf("stop input %s", b)
	}
	n := hookNotices(j.all())
	if len(n) != 1 || !strings.Contains(n[0].Text, "the changelog is not updated") || !strings.Contains(n[0].Text, "cannot be made to continue") {
		t.Fatalf("notices %+v", n)
	}
}

// A turn that ends in an error runs no Stop hook.
func TestStopHooksNotRunAfterAFailedTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	r := hookRunner(t, dir, hooks.Config{"Stop": {{Hooks: []hooks.Command{{Command: "touch " + mark}}}}})
	failing := `{"kz_script":1,"model":"m1","capabilities":["text_completion","streaming_text"]}
{"fail":{"kind":"bad_request","message":"boom"}}
`
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "cli", failing), "m1")}, Hooks: r, Workspace: dir})
	final, _ := s.RunTurn(context.Background(), "hi")
	if final.Status == string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the Stop hook ran after a failed turn")
	}
}
