package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Causes of a cancelled turn context. Each maps to its own final status.
var (
	errInterrupted = errors.New("interrupted")
	errTimeout     = errors.New("turn timeout")
	errBudget      = errors.New("budget exceeded")
	errMaxCycles   = errors.New("max cycles reached")
)

// turnState is the session's bookkeeping of the running turn. Its fields
// are guarded by the session's mutex.
type turnState struct {
	turn *Turn
	// ctx is the turn's context; cancel ends it with a cause that picks
	// the final status, and release frees its timers when the turn ends.
	ctx          context.Context
	cancel       context.CancelCauseFunc
	release      func()
	graceful     chan struct{}
	gracefulOnce sync.Once
	started      time.Time
	history      []TranscriptEntry
	// histLen is how many transcript entries history was taken from: the
	// entries after it are the turn's own, which a failover carries.
	histLen int
	usage   Usage
	cost    float64
	cycles  int
	// text holds deltas since the last assistant_message, so a turn cut
	// short still leaves its partial answer in the transcript.
	text strings.Builder
	// open holds tool calls started and not finished; commands, the
	// command_started events without their command_finished.
	open     map[string]Event
	commands map[string]Event
	// shown is the output each open call has shown so far
	// (tool_call_progress), up to ShownOutputMax bytes: the store keeps no
	// progress, so a call the turn cuts short is closed with what it
	// showed (see Event.Text), and a reopened session shows it as the
	// person saw it.
	shown map[string]*strings.Builder
	// requests are the permission requests of the open calls, by tool
	// call id: the PostToolUse hooks of a CLI runtime's call read the
	// command and paths the gate judged.
	requests map[string]PermissionRequest
	// verdicts are the gate's verdicts on open calls that DecideUnasked
	// left to RequestPermission, by tool call id.
	verdicts map[string]keptVerdict
	// mayWrite marks the open calls the checkpointer took a snapshot
	// before, whose end it must checkpoint.
	mayWrite map[string]bool
	// denials are the turn's denied tool calls in order, one per tool call
	// id, from every permission_decided deny the session sees: that covers
	// every runtime, since all decisions pass through the session.
	denials []PermissionDenial
	// boundary is the last compact_boundary of the turn or compaction.
	boundary *Event
	// pricing prices the current attempt's tokens when its runtime
	// reports none.
	pricing pricing
	// childUsage and childCost sum the turn's finished subagents, which
	// the turn's budget and final_result include.
	childUsage Usage
	childCost  float64
}

// addDenial records a denial unless its tool call is already listed.
func (t *turnState) addDenial(d PermissionDenial) {
	if d.ToolCallID != "" {
		for _, have := range t.denials {
			if have.ToolCallID == d.ToolCallID {
				return
			}
		}
	}
	t.denials = append(t.denials, d)
}

// observe updates the turn's accounting with an event before it is
// published, and enforces the budget as soon as a response overspends.
func (t *turnState) observe(ev *Event, lim Limits) {
	switch ev.Type {
	case EventTextDelta:
		t.text.WriteString(ev.Text)
	case EventAssistantMessage:
		t.text.Reset()
	case EventToolCallStarted:
		if ev.ToolCallID != "" {
			t.open[ev.ToolCallID] = *ev
		}
	case EventToolCallProgress:
		if _, open := t.open[ev.ToolCallID]; open && ev.Output != "" {
			if t.shown == nil {
				t.shown = map[string]*strings.Builder{}
			}
			b := t.shown[ev.ToolCallID]
			if b == nil {
				b = &strings.Builder{}
				t.shown[ev.ToolCallID] = b
			}
			if room := ShownOutputMax - b.Len(); room > 0 {
				b.WriteString(cutAtRune(ev.Output, room))
			}
		}
	case EventToolCallFinished:
		delete(t.open, ev.ToolCallID)
		delete(t.shown, ev.ToolCallID)
		delete(t.requests, ev.ToolCallID)
	case EventCommandStarted:
		if ev.ToolCallID != "" {
			if t.commands == nil {
				t.commands = map[string]Event{}
			}
			t.commands[ev.ToolCallID] = *ev
		}
	case EventCommandFinished:
		delete(t.commands, ev.ToolCallID)
	case EventPermissionDecided:
		if ev.Decision == DecisionDeny {
			t.addDenial(PermissionDenial{Tool: ev.Tool, ToolCallID: ev.ToolCallID,
				Input: DenialInput(ev.Command, ev.Path, ev.Input), Reason: ev.Reason})
		}
	case EventCompactBoundary:
		b := *ev
		t.boundary = &b
	case EventSessionStarted:
		if err := t.pricing.priceEvent(ev); err != nil {
			t.cancel(err)
		}
	case EventUsageUpdated:
		if err := t.pricing.priceEvent(ev); err != nil {
			t.cancel(err)
		}
		if ev.Usage != nil {
			t.usage.Add(*ev.Usage)
		}
		t.cost += ev.CostUSD
		if lim.BudgetUSD > 0 && t.cost+t.childCost > lim.BudgetUSD {
			t.cancel(errBudget)
		}
	}
}

// preflight fails fast when a turn cannot start: one is running, or the
// runtime cannot serve the mode. It emits nothing.
func (s *Session) preflight(images int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		return ErrBusy
	}
	e := s.runtimes[s.runtime]
	if e.Unavailable != "" && len(s.failover) == 0 {
		return &RuntimeError{Kind: ErrRuntimeMissing, Runtime: s.runtime, Message: e.Unavailable}
	}
	caps := e.Runtime.Capabilities(s.model)
	if err := CheckMode(s.mode, s.runtime, s.model, caps); err != nil {
		return err
	}
	if err := s.checkVisionLocked(images, s.runtime, s.model, caps); err != nil {
		return err
	}
	return s.checkPriced(s.runtime, s.model)
}

// checkVisionLocked fails a message with images on a runtime without
// vision, naming the configured runtimes that have it. The current
// runtime is the one the person chose (or the selector picked): kz does
// not silently move the turn elsewhere, the failover chain aside.
func (s *Session) checkVisionLocked(images int, runtime, model string, caps Capabilities) error {
	if images == 0 || caps.Has(CapVision) {
		return nil
	}
	var capable []string
	for _, name := range s.order {
		e := s.runtimes[name]
		m := ""
		if len(e.Models) > 0 {
			m = e.Models[0]
		}
		if name != runtime && e.Unavailable == "" && e.Runtime.Capabilities(m).Has(CapVision) {
			capable = append(capable, name)
		}
	}
	return &VisionError{Runtime: runtime, Model: model, Images: images, Capable: capable}
}

// attempt is one (runtime, model) of the failover chain.
type attempt struct {
	entry RuntimeEntry
	name  string
	model string
}

// chain lists the attempts for a turn: the current runtime's model first,
// then its other models, then each failover runtime's models (runtime-outer,
// model-inner). A runtime that cannot serve the mode, or that cannot see
// the message's images, is skipped.
func (s *Session) chain(images int) []attempt {
	var out []attempt
	seen := map[string]bool{}
	add := func(name string, models []string) {
		e, ok := s.runtimes[name]
		if !ok {
			return
		}
		if len(models) == 0 {
			models = e.Models
		}
		if len(models) == 0 {
			models = []string{""}
		}
		for _, m := range models {
			k := label(name, m)
			caps := e.Runtime.Capabilities(m)
			if seen[k] || CheckMode(s.mode, name, m, caps) != nil || (images > 0 && !caps.Has(CapVision)) {
				continue
			}
			seen[k] = true
			out = append(out, attempt{entry: e, name: name, model: m})
		}
	}
	first := s.runtimes[s.runtime]
	models := []string{s.model}
	for _, m := range first.Models {
		if m != s.model {
			models = append(models, m)
		}
	}
	add(s.runtime, models)
	for _, l := range s.failover {
		add(l.Runtime, l.Models)
	}
	return out
}

// RunTurn runs one turn to its end and returns its final_result event. The
// error is non-nil only when the turn could not start (busy, capability) or
// could not be saved; a turn that started always ends with a final_result,
// whatever happened.
func (s *Session) RunTurn(ctx context.Context, prompt string) (Event, error) {
	return s.RunMessage(ctx, UserMessage{Text: prompt})
}

// RunMessage is RunTurn for a message with attached images. A message with
// images starts only on a runtime that has CapVision (a *VisionError
// otherwise), and its failover chain skips the runtimes without it.
func (s *Session) RunMessage(ctx context.Context, msg UserMessage) (Event, error) {
	ts, attempts, err := s.beginTurn(ctx, msg)
	if err != nil {
		return Event{}, err
	}
	return s.completeTurn(ctx, ts, attempts)
}

// beginTurn checks that a turn can start, marks the session busy and emits
// the user's message, all before returning, so a second Submit right after
// the first finds the session busy.
func (s *Session) beginTurn(ctx context.Context, msg UserMessage) (*turnState, []attempt, error) {
	prompt := msg.Text
	if len(msg.Images) > MaxImages {
		return nil, nil, &RuntimeError{Kind: ErrInvalidArgument, Message: fmt.Sprintf("a message may carry at most %d images, this one has %d", MaxImages, len(msg.Images))}
	}
	if err := s.preflight(len(msg.Images)); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		return nil, nil, ErrBusy
	}
	if s.closed {
		return nil, nil, ErrClosed
	}
	if s.storeErr != nil {
		return nil, nil, fmt.Errorf("%w: %w (free space or repair the database, then start kz again)", ErrNotSaved, s.storeErr)
	}
	if from := s.resumedFrom; from != "" {
		s.resumedFrom = ""
		s.emitLocked(Event{Type: EventRuntimeSwitched, From: from, To: label(s.runtime, s.model), Reason: "resume", Runtime: s.runtime, Model: s.model})
	}
	attempts := s.chain(len(msg.Images))
	s.lastTurn++
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(errInterrupted) })
	ts := &turnState{ctx: tctx, graceful: make(chan struct{}), started: s.now(), open: map[string]Event{}}
	ts.cancel = func(cause error) { cancel(cause) }
	ts.release = func() { stop(); cancel(nil) }
	if s.limits.Timeout > 0 {
		var stopTimer context.CancelFunc
		ts.ctx, stopTimer = context.WithTimeoutCause(tctx, s.limits.Timeout, errTimeout)
		release := ts.release
		ts.release = func() { stopTimer(); release() }
	}
	ts.turn = &Turn{ID: s.lastTurn, SessionID: s.id, Prompt: prompt, Images: msg.Images, Workspace: s.workspace, Limits: s.limits, Graceful: ts.graceful, host: s}
	s.cur = ts
	// The history a runtime is primed with is the conversation before this
	// turn; the prompt itself travels as Turn.Prompt.
	// Entries before the turn never change once it starts (the previous
	// turn closed its tool calls), so the history shares them, capped so
	// that appends never reach it. After a /compact the history starts
	// from the summary instead of the entries it replaced.
	n := len(s.transcript.Entries)
	ts.history, ts.histLen = CompactedHistory(RewoundHistory(s.transcript.Entries[:n:n])), n
	s.emitLocked(Event{Type: EventUserMessage, TurnID: ts.turn.ID, Text: prompt, Images: msg.Images, Runtime: s.runtime, Model: s.model})
	return ts, attempts, nil
}

// completeTurn runs the attempts and ends the turn.
func (s *Session) completeTurn(ctx context.Context, ts *turnState, attempts []attempt) (Event, error) {
	defer ts.release()
	if s.turnContext != nil || s.turnEnv != nil {
		// Loaded before the first attempt and shared by every attempt
		// of the failover chain: each runtime of a turn works under the
		// same rules.
		tc := s.loadTurnContext(ts.ctx, attempts)
		s.mu.Lock()
		ts.turn.Context = tc
		s.mu.Unlock()
	}
	var res Result
	err := s.runPromptHooks(ts.ctx, ts)
	if err == nil {
		// The workspace's state at the turn's start is recorded while
		// an EarlyStarter's process starts; any other runtime waits
		// for it (runAttempts).
		rec := s.startRecording(ts)
		res, err = s.runAttempts(ts.ctx, ts, attempts)
		if rec != nil {
			rec.end()
		}
		s.stopHooksAfterTurn(ts.ctx, ts, res, err)
	}
	if err == nil && s.patcher != nil && ts.turn.Mode == ModePatchProposal {
		res, err = s.proposalLoop(ts.ctx, ts, attempts, res)
	}
	if s.release != nil {
		s.mu.Lock()
		name := s.runtime
		s.mu.Unlock()
		s.release(name)
	}
	// Whatever the turn changed is checkpointed before its result, even
	// when it was interrupted: its calls may have written.
	s.checkpointEnd(context.WithoutCancel(ts.ctx), ts)

	s.mu.Lock()
	final := s.finishLocked(ts.ctx, ts, res, err)
	s.cur = nil
	s.mu.Unlock()
	// Durability before the caller sees the result: must-deliver events
	// already triggered a flush; this waits for it.
	if ferr := s.journal.Flush(context.WithoutCancel(ctx)); ferr != nil {
		// A stored subscriber (kz -p) waits for a final_result that will
		// never be stored: it gets one without a sequence number, saying
		// why.
		unsaved := final
		unsaved.Seq, unsaved.Status, unsaved.ErrorKind = 0, string(StatusError), ErrStorage
		if unsaved.Text == "" {
			unsaved.Text = (&storeError{ferr}).Error()
		}
		s.bus.unsaved(unsaved)
		return unsaved, fmt.Errorf("turn %d ended but was not saved: %w", final.TurnID, errors.Join(ErrNotSaved, ferr))
	}
	return final, nil
}

// runAttempts walks the failover chain until an attempt does not fail with
// a retryable error.
func (s *Session) runAttempts(ctx context.Context, ts *turnState, attempts []attempt) (Result, error) {
	if len(attempts) == 0 {
		s.mu.Lock()
		err := CheckMode(s.mode, s.runtime, s.model, s.runtimes[s.runtime].Runtime.Capabilities(s.model))
		s.mu.Unlock()
		if err == nil {
			err = &RuntimeError{Kind: ErrRuntimeMissing, Runtime: s.runtime, Message: "no runtime in the chain can serve this turn"}
		}
		return Result{}, err
	}
	var lastErr error
	prompt, images := ts.turn.Prompt, ts.turn.Images
	for i, a := range attempts {
		s.mu.Lock()
		var carry *carryOver
		if i > 0 {
			from := label(s.runtime, s.model)
			carry = s.carryLocked(ts, prompt, from, lastErr)
			s.runtime, s.model = a.name, a.model
			s.emitLocked(Event{Type: EventRuntimeSwitched, TurnID: ts.turn.ID, From: from, To: label(a.name, a.model),
				Reason: "failover", Runtime: a.name, Model: a.model, Text: errText(lastErr) + "; " + carry.summary()})
		}
		s.runtime, s.model = a.name, a.model
		t := ts.turn
		t.Runtime, t.Model, t.Mode, t.PermissionMode = a.name, a.model, s.mode, s.pmode
		t.History, t.Prompt, t.Images = ts.history, prompt, images
		if carry != nil {
			// The runtime taking over sees the turn so far as history,
			// then a prompt to continue it (see carryOver). The images
			// travel with the request's entry in that history.
			t.History, t.Prompt, t.Images = slices.Concat(ts.history, carry.entries), carry.prompt, nil
		}
		t.NativeID = ""
		if ref, ok := s.natives[a.name]; ok && s.lastRuntime == a.name {
			t.NativeID = ref.ID
		}
		s.lastRuntime = a.name
		ts.pricing = pricing{pricer: s.pricer, budget: s.limits.BudgetUSD, runtime: a.name, configured: a.model,
			reportsCost: a.entry.Runtime.Capabilities(a.model).ReportsCost}
		unpriced := s.checkPriced(a.name, a.model)
		s.mu.Unlock()

		var res Result
		var err error
		switch {
		case unpriced != nil:
			// A failover runtime the budget cannot hold ends the turn:
			// running it would spend without a limit.
			return Result{Status: StatusError}, unpriced
		case a.entry.Unavailable != "":
			err = &RuntimeError{Kind: ErrRuntimeMissing, Runtime: a.name, Model: a.model, Message: a.entry.Unavailable}
		default:
			if _, early := a.entry.Runtime.(EarlyStarter); !early {
				if err = t.Ready(ctx); err != nil {
					return Result{Status: StatusInterrupted}, err
				}
			}
			res, err = runSafely(ctx, a.entry.Runtime, t)
		}
		if err == nil {
			return res, nil
		}
		lastErr = err
		if ctx.Err() != nil || !KindOf(err).Retryable() || i == len(attempts)-1 {
			return res, err
		}
		s.emit(Event{Type: EventError, TurnID: t.ID, Runtime: a.name, Model: a.model, Text: err.Error(), ErrorKind: KindOf(err), Retryable: true})
	}
	return Result{}, lastErr
}

// runSafely turns a runtime panic into a crashed error, so one faulty
// runtime cannot take the session (and its unsaved events) down with it.
func runSafely(ctx context.Context, rt Runtime, t *Turn) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &RuntimeError{Kind: ErrCrashed, Runtime: t.Runtime, Model: t.Model, Message: fmt.Sprintf("runtime panicked: %v", p)}
		}
	}()
	return rt.Run(ctx, t)
}

// finishLocked closes what the runtime left open and emits final_result.
func (s *Session) finishLocked(ctx context.Context, ts *turnState, res Result, err error) Event {
	t := ts.turn
	status := res.Status
	// errMsg and errKind repeat, on final_result, the error that ended the
	// turn, so that a reader of only the final result (kz -p
	// --output-format json) learns why it failed.
	var errMsg string
	var errKind ErrorKind
	var se *storeError
	var unpriced errUnpriced
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &unpriced):
		// The runtime named a model kz cannot price: the budget could
		// not hold, so the turn stopped before spending more.
		status, errMsg, errKind = StatusError, unpriced.Error(), ErrInvalidArgument
		s.emitLocked(Event{Type: EventError, TurnID: t.ID, Text: errMsg, ErrorKind: errKind})
	case errors.As(cause, &se):
		// The journal failed: what the turn does next could not be kept.
		status, errMsg, errKind = StatusError, se.Error(), ErrStorage
		s.emitLocked(Event{Type: EventError, TurnID: t.ID, Text: errMsg, ErrorKind: errKind})
	case errors.Is(cause, errTimeout):
		status = StatusTimeout
	case errors.Is(cause, errBudget):
		status = StatusBudgetExceeded
	case errors.Is(cause, errMaxCycles), KindOf(err) == ErrLimitReached:
		status = StatusMaxCycles
	case errors.Is(cause, errInterrupted), errors.Is(cause, context.Canceled):
		status = StatusInterrupted
	case err != nil:
		// A runtime whose process died mid-turn reports the turn as
		// interrupted along with the error; both are kept.
		status = StatusError
		if res.Status == StatusInterrupted {
			status = StatusInterrupted
		}
		errMsg, errKind = err.Error(), KindOf(err)
		s.emitLocked(Event{Type: EventError, TurnID: t.ID, Text: errMsg, ErrorKind: errKind, Retryable: errKind.Retryable()})
	case status == "":
		status = StatusComplete
	}
	if status == StatusComplete {
		select {
		case <-ts.graceful:
			// The runtime stopped at a safe point because it was asked to.
			if res.Status == "" {
				status = StatusInterrupted
			}
		default:
		}
	}
	output := res.Output
	if text := ts.text.String(); text != "" {
		// Streamed text the runtime never closed with a whole message: it is
		// the message, cut short only when the turn did not complete. It is
		// then also the turn's answer (partial for an interrupted turn),
		// unless the runtime reported one.
		s.emitLocked(Event{Type: EventAssistantMessage, TurnID: t.ID, Text: text, Partial: status != StatusComplete})
		if output == "" {
			output = text
		}
	}
	// A runtime may stop a command with the turn and never report its end
	// (Codex sometimes does at an interrupt): the command card ends here.
	for id, c := range ts.commands {
		s.emitLocked(Event{Type: EventCommandFinished, TurnID: t.ID, ToolCallID: id, Tool: c.Tool, Command: c.Command,
			Output: InterruptedNotRerun, IsError: true, Text: shownOutput(ts.shown[id])})
	}
	for id, open := range ts.open {
		s.emitLocked(Event{Type: EventToolCallFinished, TurnID: t.ID, ToolCallID: id, Tool: open.Tool,
			Status: ToolStatusInterrupted, Output: InterruptedNotRerun, IsError: true, Text: shownOutput(ts.shown[id])})
	}
	for id, p := range s.pending {
		if p.turnID == t.ID {
			delete(s.pending, id)
			p.answer <- Answer{Decision: DecisionDeny, Stage: "turn", Reason: "the turn ended before an answer"}
		}
	}
	usage, cost := ts.usage, ts.cost
	if !res.Usage.IsZero() {
		usage = res.Usage
	}
	if res.CostUSD > 0 {
		cost = res.CostUSD
	} else if cost == 0 && !usage.IsZero() && s.pricer != nil {
		// A runtime that reported its tokens only in its result.
		if usd, ok := s.pricer.Price(cmp.Or(res.Model, ts.pricing.reported, t.Model), usage); ok {
			cost = usd
		}
	}
	usage.Add(ts.childUsage)
	cost += ts.childCost
	cycles := ts.cycles
	if res.Cycles > 0 {
		cycles = res.Cycles
	}
	model := t.Model
	if res.Model != "" {
		model = res.Model
	}
	if res.NativeID != "" {
		s.natives[t.Runtime] = NativeRef{ID: res.NativeID, TurnID: t.ID}
	}
	s.totalUsage.Add(usage)
	s.totalCost += cost
	for _, d := range res.PermissionDenials {
		d.Input = DenialInput(d.Input, "", nil)
		ts.addDenial(d)
	}
	return s.emitLocked(Event{
		Type: EventFinalResult, TurnID: t.ID, Runtime: t.Runtime, Model: model,
		Status: string(status), Output: output, Usage: &usage, CostUSD: cost, Cycles: cycles,
		DurationMS: s.now().Sub(ts.started).Milliseconds(), NativeID: res.NativeID, PermissionDenials: ts.denials,
		Text: errMsg, ErrorKind: errKind,
	})
}

// startCycle counts a model cycle and enforces the cycle limit.
func (s *Session) startCycle(t *Turn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.cur
	if ts == nil || ts.turn != t {
		return &RuntimeError{Kind: ErrInternal, Runtime: t.Runtime, Message: "cycle started outside its turn"}
	}
	if s.limits.MaxCycles > 0 && ts.cycles >= s.limits.MaxCycles {
		ts.cancel(errMaxCycles)
		return &RuntimeError{Kind: ErrLimitReached, Runtime: t.Runtime, Model: t.Model,
			Message: fmt.Sprintf("max cycles (%d) reached", s.limits.MaxCycles)}
	}
	ts.cycles++
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ShownOutputMax bounds the output a call cut short by the end of its turn
// carries on its closing events (Event.Text).
const ShownOutputMax = 64 << 10

func shownOutput(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// cutAtRune returns at most n bytes of s, cut at a rune boundary.
func cutAtRune(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
