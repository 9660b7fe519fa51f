package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

func TestTaskPrepareRejectsBadInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"prompt":"  ","description":"x"}`:                "prompt is empty",
		`{"prompt":"p","description":"x","max_cycles":-1}`: "cannot be negative",
		`{"prompt":"p","description":"x","bogus":1}`:       "bogus",
		`{"prompt":"p","description":"x","read_only":"y"}`: "read_only",
		`[]`: "",
	} {
		_, err := Task{}.Prepare(context.Background(), nil, json.RawMessage(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", in, err, want)
		}
	}
}

// spawnRecorder answers a spawn with a fixed child result and records
// the request.
type spawnRecorder struct {
	got engine.ChildRequest
	res engine.ChildResult
	err error
}

func (s *spawnRecorder) spawn(_ context.Context, req engine.ChildRequest) (engine.ChildResult, error) {
	s.got = req
	return s.res, s.err
}

func TestTaskRunPassesTheRequestAndReturnsTheAnswer(t *testing.T) {
	t.Parallel()
	call, err := Task{}.Prepare(context.Background(), nil, json.RawMessage(
		`{"prompt":"find it","description":"find","runtime":"codex","model":"m","read_only":true,"max_cycles":3,"budget_usd":0.5,"timeout_seconds":1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if call.Request().Write || call.Request().Command != "" {
		t.Errorf("the spawn itself asks the gate for %+v", call.Request())
	}
	if _, err := call.Run(context.Background(), &RunContext{ToolCallID: "t1"}); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("without a spawner: %v", err)
	}
	rec := &spawnRecorder{res: engine.ChildResult{SessionID: "c1", Status: engine.StatusComplete, Output: "found it"}}
	out, err := call.Run(context.Background(), &RunContext{ToolCallID: "t1", Spawn: rec.spawn})
	if err != nil || out != "found it" {
		t.Fatalf("run: %q %v", out, err)
	}
	want := engine.ChildRequest{ToolCallID: "t1", Prompt: "find it", Runtime: "codex", Model: "m", Description: "find", ReadOnly: true,
		Limits: engine.Limits{MaxCycles: 3, BudgetUSD: 0.5, Timeout: 1500 * time.Millisecond}}
	if rec.got != want {
		t.Errorf("request %+v, want %+v", rec.got, want)
	}
	rec.res = engine.ChildResult{SessionID: "c1", Runtime: "codex", Status: engine.StatusBudgetExceeded, Error: "budget exceeded", Output: "half"}
	if _, err := call.Run(context.Background(), &RunContext{ToolCallID: "t1", Spawn: rec.spawn}); err == nil ||
		!strings.Contains(err.Error(), "budget_exceeded") || !strings.Contains(err.Error(), "half") {
		t.Errorf("a failed child: %v", err)
	}
	rec.err = errors.New("no runtime")
	if _, err := call.Run(context.Background(), &RunContext{ToolCallID: "t1", Spawn: rec.spawn}); err == nil || !strings.Contains(err.Error(), "no runtime") {
		t.Errorf("a child that did not start: %v", err)
	}
}

func TestTaskResultIsCapped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", engine.TaskResultMax)
	out, failed := engine.TaskResultText(engine.ChildResult{SessionID: "c1", Status: engine.StatusComplete, Output: long})
	if failed || len(out) > engine.TaskResultMax+200 || !strings.Contains(out, "session c1 holds all of it") {
		t.Errorf("capped result: %d bytes, failed %v, tail %q", len(out), failed, out[len(out)-80:])
	}
	if !strings.HasPrefix(out, "é") || strings.ContainsRune(out, '\uFFFD') {
		t.Error("the cut split a character")
	}
}
