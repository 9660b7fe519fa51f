package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// ChildRequest asks for a child turn (a subagent): a prompt run to its end
// on any configured runtime, in a session of its own linked to the parent
// session and to the parent's tool call.
type ChildRequest struct {
	// ToolCallID is the parent's tool call that spawns the child; the
	// child session is linked to it in the store.
	ToolCallID string
	Prompt     string
	// Runtime and Model choose where the child runs; empty, the parent
	// turn's runtime (and its model when the runtime is the same).
	Runtime, Model string
	// Description is a few words saying what the child does: the TUI's
	// card and kz sessions show it.
	Description string
	// ReadOnly runs the child in analysis-only mode: the gate denies
	// every write and every shell command that may write. Read-only
	// children may run in parallel; the others run one at a time.
	ReadOnly bool
	// Limits, where set, replace the configured child defaults; they are
	// cut to what remains of the parent's (see childLimits).
	Limits Limits
}

// ChildResult is how a child turn ended.
type ChildResult struct {
	SessionID string
	Runtime   string
	Model     string
	Mode      Mode
	Status    Status
	Output    string
	// Error is the error that ended the turn, if one did.
	Error     string
	Usage     Usage
	CostUSD   float64
	Cycles    int
	ToolCalls int
	Limits    Limits
}

// SubagentConfig configures the children a session's turns may spawn.
type SubagentConfig struct {
	// Limits are a child's defaults (zero fields: the parent's).
	Limits Limits
	// MaxParallel bounds the read-only children running at once; zero
	// means DefaultMaxParallelChildren.
	MaxParallel int
}

// DefaultMaxParallelChildren is how many read-only children run at once
// unless the configuration says otherwise.
const DefaultMaxParallelChildren = 3

// ChildEvent is one event of a child session as its parent's live
// subscribers receive it, wrapped in an Event of type EventChild.
type ChildEvent struct {
	SessionID   string `json:"session_id"`
	Description string `json:"description,omitempty"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	Event       Event  `json:"event"`
}

// EventChild wraps an event of a child session for the parent's live
// subscribers (Event.Child). It is never journaled in the parent: the
// child's own session stores the event, and the wrapper reaches a
// subscriber only after that store (the child's bus is gated as the
// parent's is). It is not in AllEventTypes, since no runtime emits it and
// no stored history holds it.
const EventChild EventType = "child_event"

// ChildRecorder is a Journal that records the row of a new session with
// its first events: the store's writer. A child session is registered
// through it so that the store links it to its parent.
type ChildRecorder interface {
	CreateLazily(si SessionInfo)
}

// ErrNestedChild is returned when a child tries to spawn a child of its
// own: delegation is one level deep, which bounds what one prompt can
// start.
var ErrNestedChild = errors.New("a subagent cannot spawn subagents")

// SpawnChild runs a child turn and waits for its end. Every tool call of
// the child passes the session's gate, with the session's rules and
// permission mode and a mode no looser than the parent's. Cancelling ctx
// interrupts the child. The error is non-nil only when the child could
// not start (bad request, unknown runtime, no budget left); a child that
// started reports how it ended in the result, whatever happened.
func (t *Turn) SpawnChild(ctx context.Context, req ChildRequest) (ChildResult, error) {
	return t.host.spawnChild(ctx, t, req)
}

// children is a session's bookkeeping of its running children.
type children struct {
	once sync.Once
	// sem admits read-only children one unit each and a writing child
	// with every unit, so that writers run alone and in arrival order
	// (the semaphore is FIFO: a waiting writer holds back later readers).
	sem  *semaphore.Weighted
	size int64

	mu   sync.Mutex
	live map[string]*Session
}

func (c *children) init(cfg SubagentConfig) {
	c.once.Do(func() {
		c.size = int64(cfg.MaxParallel)
		if c.size <= 0 {
			c.size = DefaultMaxParallelChildren
		}
		c.sem = semaphore.NewWeighted(c.size)
		c.live = map[string]*Session{}
	})
}

func (c *children) add(s *Session) {
	c.mu.Lock()
	c.live[s.id] = s
	c.mu.Unlock()
}

func (c *children) remove(id string) {
	c.mu.Lock()
	delete(c.live, id)
	c.mu.Unlock()
}

func (c *children) list() []*Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Session, 0, len(c.live))
	for _, s := range c.live {
		out = append(out, s)
	}
	return out
}

// spawnChild implements Turn.SpawnChild.
func (s *Session) spawnChild(ctx context.Context, t *Turn, req ChildRequest) (ChildResult, error) {
	if s.parent != nil {
		return ChildResult{}, &RuntimeError{Kind: ErrInvalidArgument, Runtime: t.Runtime, Message: ErrNestedChild.Error(), Err: ErrNestedChild}
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return ChildResult{}, &RuntimeError{Kind: ErrInvalidArgument, Runtime: t.Runtime, Message: "a subagent needs a prompt"}
	}
	// A subagent's calls change the workspace the turn's undo goes back
	// over: not before the turn's starting state is recorded (an
	// EarlyStarter may still be recording it).
	if err := t.Ready(ctx); err != nil {
		return ChildResult{}, &RuntimeError{Kind: ErrInterrupted, Runtime: t.Runtime, Message: "the subagent was cancelled before it started", Err: err}
	}
	s.kids.init(s.subagents)
	cfg, err := s.childConfig(ctx, t, req)
	if err != nil {
		return ChildResult{}, err
	}
	weight := s.kids.size
	if req.ReadOnly {
		weight = 1
	}
	if err := s.kids.sem.Acquire(ctx, weight); err != nil {
		return ChildResult{}, &RuntimeError{Kind: ErrInterrupted, Runtime: cfg.Runtime, Message: "the subagent was cancelled before it started", Err: err}
	}
	defer s.kids.sem.Release(weight)
	// The budget may have shrunk while the child waited for its turn.
	if rem, ok := s.remainingBudget(t); ok {
		if rem <= 0 {
			return ChildResult{}, &RuntimeError{Kind: ErrLimitReached, Runtime: cfg.Runtime, Message: "no budget left for a subagent"}
		}
		cfg.Limits.BudgetUSD = min(cfg.Limits.BudgetUSD, rem)
	}
	child, err := NewSession(cfg)
	if err != nil {
		return ChildResult{}, fmt.Errorf("subagent: %w", err)
	}
	child.parent, child.description, child.readOnly = s, req.Description, req.ReadOnly
	if r, ok := s.journal.(ChildRecorder); ok {
		r.CreateLazily(SessionInfo{ID: child.id, Title: req.Description, Workspace: s.workspace, Runtime: cfg.Runtime,
			Model: child.model, Mode: cfg.Mode, Parent: s.id, ParentToolCallID: req.ToolCallID})
	}
	s.kids.add(child)
	defer s.kids.remove(child.id)

	sub := child.Subscribe()
	forwarded := make(chan int)
	go s.forwardChild(sub, child, t.ID, req.ToolCallID, forwarded)

	// The parent's graceful stop asks the child to stop at its next safe
	// point too; the watcher ends with the call.
	watchDone := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-t.Graceful:
			child.Interrupt(false)
		case <-watchDone:
		}
	}()
	final, runErr := child.RunTurn(ctx, req.Prompt)
	close(watchDone)
	<-watched
	// Close flushes the child's events and ends its subscription, which
	// ends the forwarder: nothing of the child outlives the call.
	closeErr := child.Close(context.WithoutCancel(ctx))
	toolCalls := <-forwarded
	if runErr != nil && final.Type == "" {
		return ChildResult{}, fmt.Errorf("subagent on %s: %w", cfg.Runtime, runErr)
	}
	res := ChildResult{SessionID: child.id, Runtime: final.Runtime, Model: final.Model, Mode: cfg.Mode,
		Status: Status(final.Status), Output: final.Output, Error: final.Text, CostUSD: final.CostUSD,
		Cycles: final.Cycles, ToolCalls: toolCalls, Limits: cfg.Limits}
	if final.Usage != nil {
		res.Usage = *final.Usage
	}
	if res.Output == "" {
		// A runtime that reports no output answered with its last
		// message.
		tr := child.Transcript()
		for i := len(tr) - 1; i >= 0; i-- {
			if tr[i].Kind == EntryAssistant {
				res.Output = tr[i].Text
				break
			}
			if tr[i].Kind == EntryUser {
				break
			}
		}
	}
	if err := errors.Join(runErr, closeErr); err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	s.addChildCost(t, res.Usage, res.CostUSD)
	return res, nil
}

// childConfig builds the child session's configuration: its runtime and
// model, its mode (never looser than the parent's) and its limits (never
// beyond what remains of the parent's).
func (s *Session) childConfig(ctx context.Context, t *Turn, req ChildRequest) (Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, model := req.Runtime, req.Model
	if name == "" {
		name = t.Runtime
		if model == "" {
			model = t.Model
		}
	}
	e, ok := s.runtimes[name]
	if !ok {
		return Config{}, &RuntimeError{Kind: ErrInvalidArgument, Runtime: t.Runtime,
			Message: fmt.Sprintf("no runtime %q for the subagent (configured: %s)", name, strings.Join(s.order, ", "))}
	}
	if e.Unavailable != "" {
		return Config{}, &RuntimeError{Kind: ErrRuntimeMissing, Runtime: name, Message: e.Unavailable}
	}
	if model == "" && len(e.Models) > 0 {
		model = e.Models[0]
	}
	mode := s.mode
	if req.ReadOnly || mode != ModeFullAutonomous {
		// A read-only child, and any child of a parent that may not write
		// directly, runs in analysis-only mode: the strictest mode, so a
		// child is never looser than its parent. (A patch-proposal
		// parent's child proposes nothing: its findings return as text.)
		mode = ModeAnalysisOnly
	}
	if err := CheckMode(mode, name, model, e.Runtime.Capabilities(model)); err != nil {
		return Config{}, err
	}
	lim, err := childLimits(s.subagents.Limits, req.Limits, s.limits, s.remainingBudgetLocked(t), deadlineLeft(ctx))
	if err != nil {
		return Config{}, &RuntimeError{Kind: ErrLimitReached, Runtime: name, Message: err.Error()}
	}
	entries := make([]RuntimeEntry, 0, len(s.order))
	for _, n := range s.order {
		entries = append(entries, s.runtimes[n])
	}
	return Config{ID: NewID(), Workspace: s.workspace, Journal: s.journal, Runtimes: entries, Runtime: name, Model: model,
		Mode: mode, PermissionMode: s.pmode, Gate: s.gate, Interactive: s.interactive, Limits: lim, Now: s.now,
		Pricer: s.pricer, Redact: s.redactor, Context: s.turnContext, Environment: s.turnEnv, PatchRetries: -1}, nil
}

// childLimits is a child's limits: each one requested, else the configured
// default, else the parent's; then cut to the parent's, so that a child
// never goes beyond what its parent may (a parent limit of zero is no
// limit). remaining is the parent's budget left (negative: no budget);
// left is the time until the parent's deadline (zero: none).
func childLimits(defaults, requested, parent Limits, remaining float64, left time.Duration) (Limits, error) {
	if requested.MaxCycles < 0 || requested.BudgetUSD < 0 || requested.Timeout < 0 {
		return Limits{}, errors.New("a subagent's limits cannot be negative")
	}
	pick := func(r, d, p float64) float64 {
		v := r
		if v == 0 {
			v = d
		}
		if p > 0 && (v == 0 || v > p) {
			v = p
		}
		return v
	}
	lim := Limits{
		MaxCycles: int(pick(float64(requested.MaxCycles), float64(defaults.MaxCycles), float64(parent.MaxCycles))),
		BudgetUSD: pick(requested.BudgetUSD, defaults.BudgetUSD, parent.BudgetUSD),
		Timeout:   time.Duration(pick(float64(requested.Timeout), float64(defaults.Timeout), float64(parent.Timeout))),
	}
	if remaining >= 0 {
		if remaining == 0 {
			return Limits{}, errors.New("no budget left for a subagent")
		}
		lim.BudgetUSD = pick(lim.BudgetUSD, 0, remaining)
	}
	if left > 0 {
		lim.Timeout = time.Duration(pick(float64(lim.Timeout), 0, float64(left)))
	}
	return lim, nil
}

// deadlineLeft is the time until ctx's deadline, zero when it has none.
func deadlineLeft(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(time.Until(d), time.Nanosecond)
}

// remainingBudget is the parent turn's budget not yet spent, children
// included; ok is false when the parent has no budget.
func (s *Session) remainingBudget(t *Turn) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.remainingBudgetLocked(t)
	return max(r, 0), r >= 0
}

// remainingBudgetLocked is remainingBudget with s.mu held; negative means
// no budget.
func (s *Session) remainingBudgetLocked(t *Turn) float64 {
	if s.limits.BudgetUSD <= 0 {
		return -1
	}
	spent := 0.0
	if ts := s.cur; ts != nil && ts.turn == t {
		spent = ts.cost + ts.childCost
	}
	return max(s.limits.BudgetUSD-spent, 0)
}

// addChildCost counts a finished child's tokens and cost in the parent
// turn, whose budget covers its children: a parent that overspends
// through them ends with budget_exceeded like one that overspends itself.
func (s *Session) addChildCost(t *Turn, u Usage, usd float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.cur
	if ts == nil || ts.turn != t {
		return
	}
	ts.childUsage.Add(u)
	ts.childCost += usd
	if s.limits.BudgetUSD > 0 && ts.cost+ts.childCost > s.limits.BudgetUSD {
		ts.cancel(errBudget)
	}
}

// forwardChild hands every event of a child session to the parent's live
// subscribers, wrapped as EventChild, until the child's subscription ends
// (the child session closed). The wrappers carry the parent's turn and
// tool call, so a front end folds them into that call's card. It reports
// on done how many tool calls the child started.
func (s *Session) forwardChild(sub *Subscription, child *Session, turnID int64, toolCallID string, done chan<- int) {
	calls := 0
	defer func() { done <- calls }()
	defer sub.Close()
	for {
		evs, err := sub.NextBatch(context.Background())
		if err != nil {
			return
		}
		out := make([]Event, len(evs))
		for i, ev := range evs {
			if ev.Type == EventToolCallStarted {
				calls++
			}
			out[i] = Event{Type: EventChild, SessionID: s.id, Time: ev.Time, Runtime: ev.Runtime, TurnID: turnID, ToolCallID: toolCallID,
				Child: &ChildEvent{SessionID: child.id, Description: child.description, ReadOnly: child.readOnly, Event: ev}}
		}
		s.bus.forward(out...)
	}
}

// gateSessionID is the session id the gate judges a call under: a child's
// calls are judged as its root session's, so the grants the person gave
// the session ("allow for this session") hold in its children, and the
// children get no grant of their own that the parent lacks.
func (s *Session) gateSessionID() string {
	if s.parent != nil {
		return s.parent.gateSessionID()
	}
	return s.id
}
