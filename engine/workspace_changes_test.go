package engine_test

import (
	"context"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// The session counts the events that may change the workspace, so that
// what a turn loads about it (the git status summary) is reloaded after a
// turn that edited a file or ran a command, and only then.
func TestWorkspaceChangesCountsWhatMayChangeFiles(t *testing.T) {
	t.Parallel()
	const edits = `{"kz_script":1,"model":"m1","capabilities":["text_completion","streaming_text","native_tool_loop","filesystem_read","filesystem_edit","shell"]}
{"type":"session_started"}
{"cycle":true}
{"type":"tool_call_started","tool_call_id":"t1","tool":"write_file"}
{"type":"file_edited","tool_call_id":"t1","path":"a.txt"}
{"type":"tool_call_finished","tool_call_id":"t1","tool":"write_file"}
{"type":"command_started","tool_call_id":"t2","command":"make"}
{"type":"command_finished","tool_call_id":"t2","command":"make"}
{"type":"assistant_message","text":"done"}
`
	s, _ := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(script(t, "scripted", hello), "m1"), entry(script(t, "editor", edits), "m1")}})
	if n := s.WorkspaceChanges(); n != 0 {
		t.Fatalf("a new session counts %d changes", n)
	}
	if _, err := s.RunTurn(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if n := s.WorkspaceChanges(); n != 0 {
		t.Fatalf("a text-only turn counts %d changes", n)
	}
	if err := s.SwitchRuntime("editor", "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunTurn(context.Background(), "edit"); err != nil {
		t.Fatal(err)
	}
	// file_edited, tool_call_finished and command_finished.
	if n := s.WorkspaceChanges(); n != 3 {
		t.Fatalf("a turn that edited and ran counts %d changes, want 3", n)
	}
}
