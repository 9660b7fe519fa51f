package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// TaskToolName is the tool name a delegation is recorded under, whoever
// asked for it: the native runtime's task tool and the person's /task
// alike, so a runtime primed with the history sees one kind of call.
const TaskToolName = "task"

// TaskInput is the input of a task call as the history records it.
type TaskInput struct {
	Prompt      string `json:"prompt"`
	Runtime     string `json:"runtime,omitempty"`
	Model       string `json:"model,omitempty"`
	Description string `json:"description,omitempty"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	// MaxCycles, BudgetUSD and TimeoutSeconds override the configured
	// child limits, within the parent's.
	MaxCycles      int     `json:"max_cycles,omitempty"`
	BudgetUSD      float64 `json:"budget_usd,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// TaskResultMax bounds the child's answer a task result carries, as
// tools.DefaultMaxResult bounds any tool's result; the child's session
// keeps the whole answer.
const TaskResultMax = 30000

// TaskResultText renders how a child ended for the parent's model and
// history: the child's answer, or why there is none.
func TaskResultText(r ChildResult) (string, bool) {
	var b strings.Builder
	isErr := r.Status != StatusComplete
	if isErr {
		fmt.Fprintf(&b, "The subagent (session %s, %s) ended with status %s", r.SessionID, label(r.Runtime, r.Model), r.Status)
		if r.Error != "" {
			fmt.Fprintf(&b, ": %s", r.Error)
		}
		b.WriteString(".\n")
		if r.Output != "" {
			b.WriteString("Its output so far:\n")
		}
	}
	out := r.Output
	if len(out) > TaskResultMax {
		n := TaskResultMax
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out = fmt.Sprintf("%s\n… [the answer is %d bytes, more than the %d byte limit; session %s holds all of it]", out[:n], len(r.Output), TaskResultMax, r.SessionID)
	}
	b.WriteString(out)
	if !isErr && r.Output == "" {
		b.WriteString("(the subagent completed without an answer)")
	}
	return b.String(), isErr
}

// SubmitTask starts, in the background, a turn in which the person
// delegates prompt to a child on another runtime (the TUI's /task): the
// turn records a task call with the child's answer as its result, so the
// history, a resume and a runtime switch carry it like any tool call. It
// fails fast like Submit.
func (s *Session) SubmitTask(req ChildRequest) error {
	if strings.TrimSpace(req.Prompt) == "" {
		return &RuntimeError{Kind: ErrInvalidArgument, Message: "/task needs a prompt"}
	}
	s.mu.Lock()
	name := s.runtime
	e, known := s.runtimes[req.Runtime]
	s.mu.Unlock()
	if req.Runtime != "" && !known {
		return fmt.Errorf("%w %q for the task (configured: %s)", ErrNoRuntime, req.Runtime, strings.Join(s.order, ", "))
	}
	if known && e.Unavailable != "" {
		return &RuntimeError{Kind: ErrRuntimeMissing, Runtime: req.Runtime, Message: e.Unavailable}
	}
	text := "/task "
	if req.Runtime != "" {
		text += req.Runtime + " "
	}
	s.wg.Add(1)
	ts, attempts, err := s.beginTurn(context.Background(), UserMessage{Text: text + req.Prompt})
	if err != nil {
		s.wg.Done()
		return err
	}
	// The turn runs on the delegation alone, under the current runtime's
	// name: the session's runtime does not change, and the turn's own
	// pricing and limits stay those of the session.
	s.mu.Lock()
	model := s.model
	cur := s.runtimes[name]
	s.mu.Unlock()
	for _, a := range attempts {
		if a.name == name {
			model = a.model
			break
		}
	}
	// Never the chain itself: the turn's prompt is the /task line, not
	// something for a runtime to answer.
	attempts = []attempt{{entry: RuntimeEntry{Runtime: delegation{req: req, caps: cur.Runtime.Capabilities(model)}}, name: name, model: model}}
	go func() {
		defer s.wg.Done()
		_, _ = s.completeTurn(context.Background(), ts, attempts)
	}()
	return nil
}

// delegation is the runtime of a /task turn: one task call, whose result
// is the turn's answer.
type delegation struct {
	req  ChildRequest
	caps Capabilities
}

func (d delegation) Name() string { return TaskToolName }

// IgnoresEnvironment: a /task turn only hands its line to a child, whose
// own session loads the child's turn context.
func (d delegation) IgnoresEnvironment() bool         { return true }
func (d delegation) Capabilities(string) Capabilities { return d.caps }

func (d delegation) Run(ctx context.Context, t *Turn) (Result, error) {
	req := d.req
	req.ToolCallID = "task-" + NewID()
	input, _ := json.Marshal(TaskInput{Prompt: req.Prompt, Runtime: req.Runtime, Model: req.Model,
		Description: req.Description, ReadOnly: req.ReadOnly})
	t.Emit(Event{Type: EventToolCallStarted, ToolCallID: req.ToolCallID, Tool: TaskToolName, Input: input})
	res, err := t.SpawnChild(ctx, req)
	if err != nil {
		t.Emit(Event{Type: EventToolCallFinished, ToolCallID: req.ToolCallID, Tool: TaskToolName,
			Status: ToolStatusError, Output: err.Error(), IsError: true})
		return Result{}, err
	}
	out, isErr := TaskResultText(res)
	status := ToolStatusOK
	if isErr {
		status = ToolStatusError
	}
	t.Emit(Event{Type: EventToolCallFinished, ToolCallID: req.ToolCallID, Tool: TaskToolName, Status: status, Output: out, IsError: isErr})
	if isErr {
		return Result{Status: StatusError, Output: out}, nil
	}
	return Result{Status: StatusComplete, Output: res.Output}, nil
}
