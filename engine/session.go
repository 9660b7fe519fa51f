package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Session owns one conversation: it runs turns on a runtime, passes every
// event through one path (sequence, journal, transcript, subscribers),
// answers permission requests through the gate and the person, enforces the
// limits, and switches runtime and mode.
//
// Invariant: every event of a session is sequenced, journaled and published
// under s.mu, so the journal and every subscriber see the same order.
type Session struct {
	id        string
	workspace string
	journal   Journal
	gate      Gate
	// gateReady starts the gate's preparation (gatePreparer) once, when
	// a runtime first reports its session started or a tool call.
	gateReady   sync.Once
	interactive bool
	limits      Limits
	failover    []ChainLink
	patcher     Patcher
	pricer      Pricer
	redactor    func(string) string
	// patchRetries bounds the re-proposals after a failed patch.
	patchRetries int
	// turnContext loads a turn's memory and environment (Config.Context).
	turnContext func(ctx context.Context, workspace string) TurnContext
	// turnEnv loads a turn's environment (Config.Environment).
	turnEnv func(ctx context.Context, workspace string) Environment
	// hooks runs the prompt and notification hooks (Config.Hooks);
	// hookWG counts the notification hooks still running, which Close
	// waits for.
	hooks  TurnHooks
	hookWG sync.WaitGroup
	// checkpoints records what tool calls change (Config.Checkpoints).
	checkpoints Checkpointer
	// release is Config.Release.
	release func(runtime string)
	// resumed says the session continues a stored one (Config.Prior), and
	// hooksStarted that the SessionStart hooks ran in this process.
	resumed, hooksStarted bool
	runtimes              map[string]RuntimeEntry
	order                 []string
	now                   func() time.Time
	bus                   bus

	mu          sync.Mutex
	seq         int64
	lastTurn    int64
	runtime     string
	model       string
	mode        Mode
	pmode       PermissionMode
	transcript  TranscriptBuilder
	natives     map[string]NativeRef
	lastRuntime string
	// resumedFrom is the runtime of the stored session's last turn when it
	// differs from the runtime this process resumes it on. The first turn
	// (or an earlier switch) records the change as runtime_switched, so
	// that the history says which runtime continued the conversation.
	resumedFrom string
	cur         *turnState
	pending     map[string]*pendingRequest
	closed      bool
	// storeErr is the journal's failure: no turn starts after it.
	storeErr    error
	stopReports func()
	wg          sync.WaitGroup
	// total sums every finished turn of the session, resumed ones included.
	totalUsage Usage
	totalCost  float64
	// changes counts the events that may have changed the workspace (see
	// WorkspaceChanges).
	changes uint64

	// subagents configures the children this session's turns spawn, and
	// kids tracks the running ones (see SpawnChild).
	subagents SubagentConfig
	kids      children
	// parent is set on a child session: its root for the gate, and the
	// session a child may not spawn from again. description and readOnly
	// are the child's, for the wrapper events its parent forwards.
	parent      *Session
	description string
	readOnly    bool
}

// Journal persists a session's events in order. Append is called under the
// session's lock and must not wait on IO; implementations queue and write in
// batches. Flush returns once everything appended is durable.
type Journal interface {
	Append(ev Event) error
	Flush(ctx context.Context) error
}

// CommitReporter is a Journal that says what it has stored. A session on
// one shows its subscribers only what is stored (see bus): nothing a
// consumer saw can be missing from the history after a crash. With any
// other journal an event counts as stored once Append returns.
type CommitReporter interface {
	// ReportCommits calls fn after each commit with the events of the
	// session that the commit stored, in sequence order and as stored:
	// consecutive deltas may be merged into one (which carries the later
	// sequence number) or split, and tool progress is never stored. Calls
	// come one at a time, and before a Flush waiting for those events
	// returns. fn is called once with a non-nil error when the journal
	// fails; it stores nothing after that. stop ends the reports.
	ReportCommits(sessionID string, fn func(stored []Event, err error)) (stop func())
}

// ErrNotSaved is matched (errors.Is) by the error of a turn that ended, or
// could not start, because the journal failed: the session can no longer
// be saved (a full disk, a damaged database).
var ErrNotSaved = errors.New("the session could not be saved")

// storeError is the cause a journal failure cancels a turn with.
type storeError struct{ err error }

func (e *storeError) Error() string {
	return "kz could not save this session: " + e.err.Error()
}

func (e *storeError) Unwrap() []error { return []error{ErrNotSaved, e.err} }

// RuntimeEntry is a configured runtime as the session sees it.
type RuntimeEntry struct {
	Runtime Runtime
	// Models lists the runtime's models: the first is its default, the rest
	// are the fallbacks the failover chain tries in order.
	Models []string
	// Unavailable says why the runtime cannot run here (binary missing, key
	// not set); empty when it can.
	Unavailable string
	// Version is the runtime's own version when known (a CLI's).
	Version string
	// Description says in one line what the runtime is ("Claude Code
	// CLI 2.0.14", "native · anthropic claude-sonnet-4-5"), for the
	// runtime picker.
	Description string
	// FixedModels says Models is every model the runtime has (a scripted
	// runtime's): switching to another is refused. Other runtimes take
	// any name their provider knows.
	FixedModels bool
}

// ChainLink is one runtime of the failover chain and the models to try on it.
type ChainLink struct {
	Runtime string
	Models  []string
}

// NativeRef is a runtime's own session id and the turn it was last used in.
type NativeRef struct {
	ID     string
	TurnID int64
}

// SessionInfo summarises a stored session for lists and pickers: the
// store lists them, kz sessions list prints them (its JSON names are a
// public interface) and the TUI's session picker shows them.
type SessionInfo struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	Runtime   string `json:"runtime"`
	// Runtimes lists every runtime the session ran turns on, in order of
	// first use; it is empty for a session without turns.
	Runtimes []string  `json:"runtimes,omitempty"`
	Model    string    `json:"model"`
	Mode     Mode      `json:"mode"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Turns    int       `json:"turns"`
	CostUSD  float64   `json:"cost_usd"`
	LastSeq  int64     `json:"last_seq"`
	// Parent is the session that spawned this one as a subagent, and
	// ParentToolCallID the parent's tool call that did; both are empty
	// for a session the person started.
	Parent           string `json:"parent_session_id,omitempty"`
	ParentToolCallID string `json:"parent_tool_call_id,omitempty"`
	// Children counts the subagent sessions this session spawned.
	Children int `json:"children,omitempty"`
}

// Prior is the persisted state of a session being resumed.
type Prior struct {
	// Usage and CostUSD are the totals of the turns already stored.
	Usage       Usage
	CostUSD     float64
	LastSeq     int64
	LastTurn    int64
	Transcript  []TranscriptEntry
	Natives     map[string]NativeRef
	LastRuntime string
}

// Config configures a session.
type Config struct {
	// ID of the session; a new one is generated when empty.
	ID             string
	Workspace      string
	Journal        Journal
	Runtimes       []RuntimeEntry
	Runtime        string
	Model          string
	Mode           Mode
	PermissionMode PermissionMode
	// Gate decides tool calls; nil means PermissionModeGate.
	Gate Gate
	// Interactive says a person can answer permission requests. When false
	// (headless), a request the gate asks about is denied at once.
	Interactive bool
	Limits      Limits
	// Failover lists the runtimes tried after the current runtime's models.
	Failover []ChainLink
	Prior    *Prior
	Now      func() time.Time
	// Patcher reviews and applies proposals in patch-proposal mode; without
	// one, that mode only talks.
	Patcher Patcher
	// PatchRetries bounds re-proposals after a failed proposal: 0 means
	// DefaultPatchRetries, a negative value none.
	PatchRetries int
	// Pricer prices the tokens of runtimes that report no cost; without
	// one, such tokens cost nothing and a budget only counts reported
	// costs.
	Pricer Pricer
	// Redact removes secrets from text the way the store does before it
	// persists it; a failover carries the turn so far through it. Nil
	// carries text as it is.
	Redact func(string) string
	// Context, when set, loads the project memory and the environment of
	// the workspace at the start of each turn (outside the session's
	// lock: it reads files and may run git under the sandbox).
	Context func(ctx context.Context, workspace string) TurnContext
	// Environment, when set, loads the environment of the workspace
	// instead of Context (which then loads the memory only): the session
	// calls it beside Context, and only for a turn one of whose runtimes
	// shows the environment to its model (see EnvironmentBlind), so that
	// a turn on an agent CLI runs no git for a block its CLI never sees.
	Environment func(ctx context.Context, workspace string) Environment
	// Hooks runs the person's SessionStart, UserPromptSubmit and
	// Notification hooks; nil runs none.
	Hooks TurnHooks
	// Subagents configures the child turns this session's turns may
	// spawn (Turn.SpawnChild).
	Subagents SubagentConfig
	// Checkpoints records what every tool call changes in the workspace,
	// for undo and /rewind; nil records nothing.
	Checkpoints Checkpointer
	// Release, when set, is called once a turn no longer needs its
	// runtime (its attempts, its stop hooks and its patch rounds are
	// over), before the turn's last checkpoint and its result are stored,
	// with the name of the runtime that served it last. A session that
	// runs no further turn (kz -p) stops the runtime's process then, so
	// that the CLI's exit overlaps kz's own end of the turn instead of
	// following it. It must not block. A later turn on the runtime would
	// start a new process, as after any restart.
	Release func(runtime string)
}

// Errors of the session API.
var (
	ErrBusy           = errors.New("a turn is already running")
	ErrUnknownRequest = errors.New("no pending permission request with that id")
	ErrNoRuntime      = errors.New("unknown runtime")
)

// NewSession validates cfg and returns a session ready for turns.
func NewSession(cfg Config) (*Session, error) {
	if cfg.Journal == nil {
		return nil, errors.New("session: a journal is required")
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeFullAutonomous
	}
	if cfg.PermissionMode == "" {
		cfg.PermissionMode = PermissionAsk
	}
	if cfg.Gate == nil {
		cfg.Gate = PermissionModeGate{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ID == "" {
		cfg.ID = NewID()
	}
	s := &Session{
		id: cfg.ID, workspace: cfg.Workspace, journal: cfg.Journal, gate: cfg.Gate,
		interactive: cfg.Interactive, limits: cfg.Limits, failover: cfg.Failover,
		runtimes: map[string]RuntimeEntry{}, now: cfg.Now,
		mode: cfg.Mode, pmode: cfg.PermissionMode, natives: map[string]NativeRef{},
		pending: map[string]*pendingRequest{}, patcher: cfg.Patcher, patchRetries: cfg.PatchRetries,
		pricer: cfg.Pricer, redactor: cfg.Redact, turnContext: cfg.Context, turnEnv: cfg.Environment, hooks: cfg.Hooks, resumed: cfg.Prior != nil,
		subagents:   cfg.Subagents,
		checkpoints: cfg.Checkpoints, release: cfg.Release,
	}
	switch {
	case s.patchRetries == 0:
		s.patchRetries = DefaultPatchRetries
	case s.patchRetries < 0:
		s.patchRetries = 0
	}
	for _, e := range cfg.Runtimes {
		name := e.Runtime.Name()
		if _, dup := s.runtimes[name]; dup {
			return nil, fmt.Errorf("session: runtime %q configured twice", name)
		}
		s.runtimes[name] = e
		s.order = append(s.order, name)
	}
	if cfg.Runtime == "" && len(s.order) > 0 {
		cfg.Runtime = s.order[0]
	}
	e, ok := s.runtimes[cfg.Runtime]
	if !ok {
		return nil, fmt.Errorf("%w %q (configured: %s)", ErrNoRuntime, cfg.Runtime, strings.Join(s.order, ", "))
	}
	s.runtime, s.model = cfg.Runtime, cfg.Model
	if s.model == "" && len(e.Models) > 0 {
		s.model = e.Models[0]
	}
	if r, ok := cfg.Journal.(CommitReporter); ok {
		s.bus.gated = true
		s.stopReports = r.ReportCommits(s.id, s.committed)
	}
	if p := cfg.Prior; p != nil {
		s.seq, s.lastTurn, s.lastRuntime = p.LastSeq, p.LastTurn, p.LastRuntime
		if p.LastRuntime != "" && p.LastRuntime != s.runtime {
			s.resumedFrom = p.LastRuntime
		}
		s.totalUsage, s.totalCost = p.Usage, p.CostUSD
		s.transcript.Entries = append([]TranscriptEntry(nil), p.Transcript...)
		for k, v := range p.Natives {
			s.natives[k] = v
		}
		invalidNatives(p.Transcript, s.natives)
	}
	return s, nil
}

// NewID returns a new session id: a time prefix, so ids sort by creation,
// and random bits.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405-") + hex.EncodeToString(b[:])
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Subscribe returns a new live subscription to the session's events from
// now on: deltas arrive as a preview, every other event once it is stored
// (see bus). It suits a display.
func (s *Session) Subscribe() *Subscription { return s.bus.subscribe(false) }

// SubscribeStored returns a new subscription that receives the session's
// events only as the journal stored them, from now on: the same sequence
// numbers, text and order as the history. Tool progress, which is never
// stored, never arrives. When the journal fails, the turn's end arrives
// with sequence number zero, marking it not stored. It suits a printer
// whose output must agree with the history (kz -p).
func (s *Session) SubscribeStored() *Subscription { return s.bus.subscribe(true) }

// committed is the journal's report (see CommitReporter). A failure ends
// the running turn: its events would be shown but never stored.
func (s *Session) committed(stored []Event, err error) {
	s.bus.commit(stored, err)
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.storeErr == nil {
		s.storeErr = err
	}
	if s.cur != nil {
		s.cur.cancel(&storeError{err})
	}
}

// State is a snapshot of the session for a status bar.
type State struct {
	ID             string
	Runtime        string
	Model          string
	Mode           Mode
	PermissionMode PermissionMode
	Running        bool
	// Usage and CostUSD are those of the running turn.
	Usage   Usage
	CostUSD float64
	// TotalUsage and TotalCostUSD cover the whole session so far,
	// including the running turn.
	TotalUsage   Usage
	TotalCostUSD float64
	Limits       Limits
}

// State returns a snapshot of the session.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{ID: s.id, Runtime: s.runtime, Model: s.model, Mode: s.mode, PermissionMode: s.pmode, Limits: s.limits,
		TotalUsage: s.totalUsage, TotalCostUSD: s.totalCost}
	if s.cur != nil {
		st.Running, st.Usage, st.CostUSD = true, s.cur.usage, s.cur.cost
		st.TotalUsage.Add(s.cur.usage)
		st.TotalCostUSD += s.cur.cost
	}
	return st
}

// Transcript returns a copy of the runtime-neutral conversation so far.
func (s *Session) Transcript() []TranscriptEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TranscriptEntry(nil), s.transcript.Entries...)
}

// RuntimeInfo describes a configured runtime for pickers.
type RuntimeInfo struct {
	Name         string
	Description  string
	Models       []string
	Capabilities Capabilities
	Unavailable  string
	Current      bool
}

// Runtimes lists the configured runtimes in configuration order.
func (s *Session) Runtimes() []RuntimeInfo {
	s.mu.Lock()
	cur := s.runtime
	s.mu.Unlock()
	out := make([]RuntimeInfo, 0, len(s.order))
	for _, n := range s.order {
		e := s.runtimes[n]
		model := ""
		if len(e.Models) > 0 {
			model = e.Models[0]
		}
		out = append(out, RuntimeInfo{Name: n, Description: e.Description, Models: e.Models, Capabilities: e.Runtime.Capabilities(model),
			Unavailable: e.Unavailable, Current: n == cur})
	}
	return out
}

// SetMode changes the mode for the next tool calls and turns. It refuses a
// mode the current runtime cannot serve, with the capability message.
func (s *Session) SetMode(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == s.mode {
		return nil
	}
	e := s.runtimes[s.runtime]
	if err := CheckMode(m, s.runtime, s.model, e.Runtime.Capabilities(s.model)); err != nil {
		return err
	}
	from := s.mode
	s.mode = m
	s.emitLocked(Event{Type: EventModeChanged, From: string(from), Mode: m, Runtime: s.runtime})
	return nil
}

// SetPermissionMode changes what happens to requests the gate asks about.
func (s *Session) SetPermissionMode(p PermissionMode) error {
	if _, err := ParsePermissionMode(string(p)); err != nil {
		return err
	}
	s.mu.Lock()
	s.pmode = p
	s.mu.Unlock()
	return nil
}

// SwitchRuntime makes name (with model, or its default) the runtime of the
// next turn. The new runtime continues the same conversation: it is primed
// from the transcript. It refuses while a turn runs, and refuses a runtime
// that is unavailable or cannot serve the current mode, saying why.
func (s *Session) SwitchRuntime(name, model string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		return fmt.Errorf("switch runtime: %w (interrupt it first)", ErrBusy)
	}
	e, ok := s.runtimes[name]
	if !ok {
		return fmt.Errorf("switch runtime: %w %q (configured: %s)", ErrNoRuntime, name, strings.Join(s.order, ", "))
	}
	if e.Unavailable != "" {
		return fmt.Errorf("switch runtime: %s is not available here: %s", name, e.Unavailable)
	}
	if model == "" && len(e.Models) > 0 {
		model = e.Models[0]
	}
	if e.FixedModels && !slices.Contains(e.Models, model) {
		return fmt.Errorf("switch runtime: %s has no model %q (it has %s)", name, model, strings.Join(e.Models, ", "))
	}
	if err := CheckMode(s.mode, name, model, e.Runtime.Capabilities(model)); err != nil {
		return err
	}
	pending := s.resumedFrom
	if pending == name {
		// Back on the runtime the stored session last ran: the history
		// needs no marker for a change it never saw.
		s.resumedFrom = ""
	}
	if name == s.runtime && model == s.model {
		return nil
	}
	from := label(s.runtime, s.model)
	if pending != "" {
		from, s.resumedFrom = pending, ""
	}
	s.runtime, s.model = name, model
	s.emitLocked(Event{Type: EventRuntimeSwitched, From: from, To: label(name, model), Reason: "user", Runtime: name, Model: model})
	return nil
}

// Interrupt stops the running turn: gracefully at the runtime's next safe
// point, or immediately (the runtime's context is cancelled).
func (s *Session) Interrupt(immediate bool) { s.InterruptTurn(0, immediate) }

// InterruptTurn is Interrupt for turn id only: a front end that saw turn
// id running names it, so that a stop meant for a turn that ended in the
// meantime never lands on the next one (a queued message starts it at
// once). Zero means whatever turn runs.
func (s *Session) InterruptTurn(id int64, immediate bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || (id != 0 && s.cur.turn.ID != id) {
		return
	}
	if immediate {
		s.cur.cancel(errInterrupted)
		return
	}
	s.cur.gracefulOnce.Do(func() { close(s.cur.graceful) })
}

// Submit starts a turn in the background and returns at once. It fails
// fast, before any event, when a turn is running or the runtime cannot serve
// the mode. The outcome arrives as events ending with final_result.
func (s *Session) Submit(prompt string) error {
	return s.SubmitMessage(UserMessage{Text: prompt})
}

// SubmitMessage is Submit for a message with attached images; it fails
// at once, starting nothing, when the runtime cannot see them.
func (s *Session) SubmitMessage(msg UserMessage) error {
	s.wg.Add(1)
	ts, attempts, err := s.beginTurn(context.Background(), msg)
	if err != nil {
		s.wg.Done()
		return err
	}
	go func() {
		defer s.wg.Done()
		// The outcome is in the event stream (error and final_result).
		_, _ = s.completeTurn(context.Background(), ts, attempts)
	}()
	return nil
}

// Close interrupts a running turn, waits for it, ends every subscription
// and flushes the journal. The journal itself belongs to the caller.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	if s.cur != nil {
		s.cur.cancel(errInterrupted)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.hookWG.Wait()
	// The flush delivers what is still being stored before the
	// subscriptions end.
	err := s.journal.Flush(ctx)
	if s.stopReports != nil {
		s.stopReports()
	}
	s.bus.close()
	if err != nil {
		return fmt.Errorf("close session: %w", err)
	}
	return nil
}

// emitLocked sequences, journals, folds and publishes one event. s.mu must
// be held.
func (s *Session) emitLocked(ev Event) Event {
	s.seq++
	ev.Seq, ev.SessionID = s.seq, s.id
	if ev.Time.IsZero() {
		ev.Time = s.now()
	}
	// Every event names the runtime it belongs to; the session's own events
	// (decisions, errors it raises) belong to the runtime in charge.
	if ev.Runtime == "" {
		ev.Runtime = s.runtime
	}
	if t := s.cur; t != nil && ev.TurnID == t.turn.ID {
		t.observe(&ev, s.limits)
	}
	if ev.Type == EventSessionStarted && ev.NativeID != "" {
		s.natives[ev.Runtime] = NativeRef{ID: ev.NativeID, TurnID: ev.TurnID}
	}
	if changesWorkspace(ev.Type) {
		s.changes++
	}
	// A journal that fails reports it through ReportCommits (which ends
	// the turn) and to the Flush that ends the turn; Append's error says
	// the same.
	_ = s.journal.Append(ev)
	s.transcript.Apply(ev)
	s.bus.publish(ev)
	return ev
}

// WorkspaceChanges counts the events of the session so far that may have
// changed the workspace: a file edited, a command run, a patch applied, a
// tool call finished. A cache of what a turn runs under (the git status
// summary) keyed by it is given again only after turns that changed
// nothing.
func (s *Session) WorkspaceChanges() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes
}

// changesWorkspace reports whether an event of type t may have changed
// the workspace's files.
func changesWorkspace(t EventType) bool {
	switch t {
	case EventFileEdited, EventCommandFinished, EventPatchApplied, EventToolCallFinished:
		return true
	}
	return false
}

// emit publishes one event. A CLI runtime's tool call that finished
// without error then runs the PostToolUse hooks, after the event is
// published and outside the lock, in the runtime's own goroutine as
// Claude Code runs them: the runtime's next events wait for them.
//
// A shell call's start and the end of a call that may have written go to
// the checkpointer the same way: the snapshot before the call is taken
// before the runtime hears back, and the checkpoint after it is stored
// before the runtime's next event.
func (s *Session) emit(ev Event) Event {
	if ev.Type == EventSessionStarted || ev.Type == EventToolCallStarted {
		s.gateReady.Do(s.prepareGate)
	}
	s.mu.Lock()
	q, post := s.postToolQueryLocked(ev)
	cc, before, after := s.checkpointQueryLocked(ev)
	var ctx context.Context
	if post || before || after {
		ctx = s.cur.ctx
	}
	out := s.emitLocked(ev)
	s.mu.Unlock()
	if before {
		if err := s.checkpoints.BeforeCall(ctx, cc); err != nil {
			s.checkpointError(cc.TurnID, cc.ToolCallID, err)
		}
	}
	if after {
		if err := s.checkpoints.AfterCall(ctx, cc); err != nil {
			s.checkpointError(cc.TurnID, cc.ToolCallID, err)
		}
	}
	if post {
		s.postToolHooks(ctx, out.TurnID, q, ev.Output)
	}
	return out
}

// prepareGate lets a gate that has work to do before its first check
// (gatePreparer) do it in the background.
func (s *Session) prepareGate() {
	if p, ok := s.gate.(gatePreparer); ok {
		go p.Prepare()
	}
}

func label(runtime, model string) string {
	if model == "" {
		return runtime
	}
	return runtime + "/" + model
}
