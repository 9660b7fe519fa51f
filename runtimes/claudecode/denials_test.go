package claudecode

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// resultRecorder keeps the Result the Claude runtime itself returns, so a
// test can tell what the runtime reports from what the session adds.
type resultRecorder struct {
	*Runtime
	mu   sync.Mutex
	last engine.Result
}

func (r *resultRecorder) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	res, err := r.Runtime.Run(ctx, t)
	r.mu.Lock()
	r.last = res
	r.mu.Unlock()
	return res, err
}

func (r *resultRecorder) result() engine.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// TestReplayResultDenials: the recorded deny session's result line lists
// the Bash call in permission_denials; the runtime's Result carries it
// (tool, id, command as the input summary) and so does final_result, once,
// although kz's own decision on the same call was seen as well.
func TestReplayResultDenials(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "claude-code.approval-deny.jsonl"))
	rec := &resultRecorder{Runtime: f.rt}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rec}}, clitest.Options{Answer: func(engine.Event) engine.Answer {
		return engine.Answer{Decision: engine.DecisionDeny, Feedback: "The kz user denied this tool call."}
	}})
	final := h.Run(t, context.Background(), "Create out.txt. KZSCRIPT:bash")
	_ = f.rt.Close()
	f.CheckReport()
	want := engine.PermissionDenial{Tool: "Bash", ToolCallID: "toolu_d4885fd668bb4653baef2b0d", Input: "echo hi > out.txt"}
	if got := rec.result().PermissionDenials; !slices.Equal(got, []engine.PermissionDenial{want}) {
		t.Errorf("Result.PermissionDenials = %+v, want [%+v]", got, want)
	}
	if got := final.PermissionDenials; len(got) != 1 || got[0].Tool != want.Tool || got[0].ToolCallID != want.ToolCallID || got[0].Input != want.Input {
		t.Errorf("final_result permission_denials = %+v, want one %+v", got, want)
	}
	if fr := h.Journal.OfType(engine.EventFinalResult); len(fr) != 1 || len(fr[0].PermissionDenials) != 1 {
		t.Errorf("journalled final_result %+v", fr)
	}
}

// TestResultDenialsInFinalResult: kz's denial (by the permission mode) and
// one Claude made on its own both reach final_result, in order, with the
// gate's reason on kz's and the JSON input summarised on Claude's; an
// allowed run has none.
func TestResultDenialsInFinalResult(t *testing.T) {
	lines := bashTurn("ls", `{"type":"control_response","response":{"request_id":"req-1","response":{"behavior":"deny"}}}`)
	lines[len(lines)-1] = clitest.CLI(`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done","session_id":"sess-1","permission_denials":[` +
		`{"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls"}},{"tool_name":"WebFetch","tool_use_id":"toolu_web","tool_input":{"url":"https://example.com"}}]}`)
	f := newFake(t, lines)
	rec := &resultRecorder{Runtime: f.rt}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rec}}, clitest.Options{PermissionMode: engine.PermissionDeny})
	final := h.Run(t, context.Background(), "go")
	_ = f.rt.Close()
	f.CheckReport()
	if got := rec.result().PermissionDenials; len(got) != 2 || got[1] != (engine.PermissionDenial{Tool: "WebFetch", ToolCallID: "toolu_web", Input: `{"url":"https://example.com"}`}) {
		t.Errorf("Result.PermissionDenials = %+v", got)
	}
	d := final.PermissionDenials
	if len(d) != 2 || d[0].ToolCallID != "toolu_1" || d[0].Tool != "Bash" || d[0].Input != "ls" || d[0].Reason == "" ||
		d[1].ToolCallID != "toolu_web" || d[1].Tool != "WebFetch" || d[1].Input != `{"url":"https://example.com"}` {
		t.Errorf("final_result permission_denials = %+v", d)
	}

	f2 := newFake(t, clitest.Sample(t, "claude-code.approval-allow.jsonl"))
	h2 := newHarness(t, single(f2), clitest.Options{Answer: clitest.AllowOnce})
	final = h2.Run(t, context.Background(), "Create out.txt. KZSCRIPT:bash")
	_ = f2.rt.Close()
	if final.PermissionDenials != nil {
		t.Errorf("allowed turn reports denials %+v", final.PermissionDenials)
	}
}
