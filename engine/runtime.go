package engine

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Runtime is an agent loop: kz's own over an LLM API, a CLI driven as a
// subprocess, or the scripted replay. A runtime runs one turn at a time.
//
// Run emits events through the turn, asks permission through the turn for
// every tool call, and returns when the turn ends. Cancelling ctx is the
// immediate interrupt: the runtime must stop at once (killing subprocesses)
// and return. Closing turn.Graceful is the graceful interrupt: the runtime
// stops at its next safe point and returns StatusInterrupted. The session,
// not the runtime, emits final_result.
type Runtime interface {
	Name() string
	// Capabilities reports what the runtime can do with the given model
	// (empty means the runtime's default model).
	Capabilities(model string) Capabilities
	Run(ctx context.Context, turn *Turn) (Result, error)
}

// Result is what a runtime reports at the end of a turn. Zero usage and cost
// mean "use what the session summed from usage_updated events".
type Result struct {
	Status   Status
	Output   string
	Usage    Usage
	CostUSD  float64
	Model    string
	Cycles   int
	NativeID string
	// PermissionDenials are denials the runtime learnt of that kz may not
	// have seen as permission_decided events (Claude Code's result lists
	// them). The session merges them, by tool call id, with the denials it
	// observed during the turn.
	PermissionDenials []PermissionDenial
}

// Limits bound one turn. Zero means no limit.
type Limits struct {
	MaxCycles int
	BudgetUSD float64
	Timeout   time.Duration
}

// Turn is one prompt being answered. The session builds it; a runtime reads
// it and calls its methods, which are safe for concurrent use.
type Turn struct {
	ID        int64
	SessionID string
	Prompt    string
	// Images are the images attached to Prompt. The session starts a turn
	// with images only on a runtime that has CapVision.
	Images         []Image
	Runtime        string
	Model          string
	Mode           Mode
	PermissionMode PermissionMode
	Workspace      string
	Limits         Limits
	// History is the runtime-neutral conversation before this turn, for a
	// runtime that has to be primed with it. It is shared: read it, never
	// change it.
	History []TranscriptEntry
	// NativeID is this runtime's own session id to resume. It is set only
	// when nothing happened on another runtime since this one last ran, so
	// resuming loses nothing.
	NativeID string
	// Graceful is closed when the person asks the turn to stop at the next
	// safe point.
	Graceful <-chan struct{}
	// Context holds the project memory files and the environment, which
	// the native and completion runtimes put in their system prompt and
	// the CLI runtimes hand to their agent (but for the files it reads
	// itself).
	Context TurnContext

	host turnHost
	// recording records the workspace's state at the turn's start (see
	// Ready); nil means there is nothing to record.
	recording *recording
}

// EarlyStarter is a runtime that may begin a turn before the workspace's
// state at the turn's start is recorded (the checkpoint that undoing the
// turn goes back to, a scan of every file: tens of milliseconds in a
// repository of 10,000 files, seconds the first time kz sees it). It
// starts what takes time first (an agent CLI's process, which then takes
// hundreds of milliseconds to be ready, and whose sandbox searches the
// workspace too), then calls Turn.Record, so that the state is recorded
// while the process starts up and answers its handshake, and calls
// Turn.Ready before anything of the turn reaches its model: no tool call
// of the turn can change a file before its state is recorded. A runtime
// whose every tool call passes the gate (kz's own loop) calls Record at
// its start and need not call Ready: the gate waits for the recording
// before it decides any call, and a subagent waits for it before it
// starts, so the model's first request goes out while the state is
// recorded. The session records the state before it runs any other
// runtime.
type EarlyStarter interface {
	Runtime
	// StartsEarly marks the runtime; it does nothing.
	StartsEarly()
}

// Record starts recording the workspace's state at the turn's start, if
// nothing did yet, and returns at once. An EarlyStarter calls it once its
// process is started.
func (t *Turn) Record() {
	if t.recording != nil {
		t.recording.start()
	}
}

// Ready records the workspace's state at the turn's start, if no call did
// yet, and waits until it is recorded or ctx ends (its cause is
// returned). An EarlyStarter calls it before it hands the turn's prompt to
// its model; the gate waits for it before it decides any tool call of the
// turn.
func (t *Turn) Ready(ctx context.Context) error {
	if t.recording == nil {
		return nil
	}
	return t.recording.wait(ctx)
}

// recording is the recording of a turn's starting state: it starts at
// the first wait (or end) and runs once, in a goroutine of its own so
// that a wait can end with its context.
type recording struct {
	once sync.Once
	run  func()
	done chan struct{}
}

func newRecording(run func()) *recording { return &recording{run: run, done: make(chan struct{})} }

func (r *recording) start() {
	r.once.Do(func() {
		go func() {
			defer close(r.done)
			r.run()
		}()
	})
}

// wait starts the recording and waits for it or the end of ctx.
func (r *recording) wait(ctx context.Context) error {
	r.start()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// end starts the recording if nothing did and waits for it: the turn's
// end compares the workspace with it.
func (r *recording) end() {
	r.start()
	<-r.done
}

// turnHost is the part of the session a turn calls back into.
type turnHost interface {
	emit(ev Event) Event
	requestPermission(ctx context.Context, t *Turn, req PermissionRequest) Answer
	decideUnasked(ctx context.Context, t *Turn, req PermissionRequest) (Answer, bool)
	startCycle(t *Turn) error
	spawnChild(ctx context.Context, t *Turn, req ChildRequest) (ChildResult, error)
}

// Emit publishes an event of this turn. The session fills in the session
// id, sequence, time, turn and (when empty) the runtime and model.
func (t *Turn) Emit(ev Event) {
	if ev.Runtime == "" {
		ev.Runtime = t.Runtime
	}
	if ev.Model == "" && (ev.Type == EventSessionStarted || ev.Type == EventAssistantMessage) {
		ev.Model = t.Model
	}
	if ev.Type == EventSessionStarted && ev.Memory == nil {
		// Every runtime's session_started lists the memory files, so
		// the person sees them whatever runs the turn.
		ev.Memory = t.Context.Memory
	}
	ev.TurnID = t.ID
	t.host.emit(ev)
}

// RequestPermission passes a tool call through the gate and, when the gate
// asks, waits for the person's answer or the end of ctx (which denies). It
// never returns an empty decision.
func (t *Turn) RequestPermission(ctx context.Context, req PermissionRequest) Answer {
	return t.host.requestPermission(ctx, t, req)
}

// DecideUnasked runs the gate on req as RequestPermission does, but asks
// nobody and decides only an allow: when the gate allows the call by
// itself, the decision is logged and the call checkpointed as
// RequestPermission would, and decided is true. Otherwise nothing is
// logged and decided is false; the runtime then makes the call go through
// RequestPermission, which takes the verdict already given for the same
// request (the gate and its hooks run once per call). A runtime whose CLI
// asks before a call in two steps (Claude Code's PreToolUse hook, then its
// permission request) answers the first with it and spares the second.
func (t *Turn) DecideUnasked(ctx context.Context, req PermissionRequest) (a Answer, decided bool) {
	return t.host.decideUnasked(ctx, t, req)
}

// StartCycle is called by a runtime before each model request. It returns a
// *RuntimeError of kind ErrLimitReached when the turn's cycle limit is
// reached; the session then ends the turn with StatusMaxCycles.
func (t *Turn) StartCycle() error { return t.host.startCycle(t) }

// PermissionRequest is one tool call that needs a decision, in kz's view:
// whatever the runtime, a shell command is a Command and file access names
// its Paths, so one gate judges all runtimes alike.
type PermissionRequest struct {
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input,omitempty"`
	Command    string          `json:"command,omitempty"`
	Paths      []string        `json:"paths,omitempty"`
	// Write marks a request that changes files (edits, writes, patches).
	Write bool `json:"write,omitempty"`
	// Diff is a write's change as a unified diff against the files as
	// they are, one ---/+++ section per file: the review shows it and
	// numbers its hunks (internal/diff's FileHunks of each section).
	Diff string `json:"diff,omitempty"`
	// Selection says whether the runtime can take part of the write
	// (Answer.Patch) or only all of it.
	Selection Selection `json:"selection,omitempty"`
	// PatchID names the patch proposal this request applies (Tool
	// apply_patch) or verifies (one of its verification commands); empty
	// for a runtime's own calls.
	PatchID string `json:"patch_id,omitempty"`
	// Internal marks kz's own call (a proposal's verification command),
	// made by kz and not by the runtime: the runtime's capabilities do not
	// limit it, every other stage of the gate does.
	Internal bool `json:"internal,omitempty"`
	// Sandboxed says the runtime runs the command inside its own sandbox;
	// the gate may take it into account but never relaxes safety checks.
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// Selection says what part of a write a runtime can take from the review.
// The review offers hunk and file marks only where the runtime can carry
// them out; elsewhere it says why it cannot, rather than ignoring a mark.
type Selection string

const (
	// SelectionWhole is a write the runtime applies whole or not at all:
	// its protocol answers an approval with accept or decline only (Codex).
	SelectionWhole Selection = ""
	// SelectionContent is a write whose runtime writes what the person
	// kept: the answer's Patch names, per file of Diff, the hunks kept or
	// the content written, and the runtime lands exactly that content.
	SelectionContent Selection = "content"
)

// Verdict is the gate's decision on a request, with the stage and rule that
// decided and why.
type Verdict struct {
	Decision Decision `json:"decision"`
	Stage    string   `json:"stage,omitempty"`
	Rule     string   `json:"rule,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	// Grants, on an ask, are the rules "always allow" would save.
	Grants []string `json:"grants,omitempty"`
	// Confinement is how the OS confines a shell command this verdict
	// lets run: on an allow, the profile it runs under; on an ask, the
	// profile it runs under once the person says yes. Empty for requests
	// that start no process (file tools, MCP tools).
	Confinement Confinement `json:"confinement,omitzero"`
}

// ConfinementProfile names the OS sandbox profile of a command. A shell
// command kz runs (its bash tool, a proposal's verification) always runs
// under one: the analysis decides whether to ask, the profile makes what
// the analysis claimed true, so that a wrong proof does no harm.
type ConfinementProfile string

// Confinement profiles.
const (
	// ProfileReadOnly: the file system is read-only except a private
	// temporary directory; credentials are hidden; no other process of
	// the machine is visible. The profile of commands the analysis
	// proved read-only, of analysis-only mode and of the model's shell in
	// patch-proposal mode.
	ProfileReadOnly ConfinementProfile = "read-only"
	// ProfileWorkspaceWrite: as read-only, plus writes to the workspace,
	// except its protected paths (.git at any depth, .kz, agent
	// configuration), which stay read-only. The profile of commands a
	// rule, a grant, yolo or the person allowed.
	ProfileWorkspaceWrite ConfinementProfile = "workspace-write"
)

// Confinement is the sandbox a command runs under. The zero value means
// the gate decided nothing about confinement; a runner treats it as the
// strictest profile (read-only, no network), never as "unconfined".
type Confinement struct {
	Profile ConfinementProfile `json:"profile,omitempty"`
	// Network lets the command reach the network. It is off unless a
	// rule, a grant, yolo or the person allowed the command.
	Network bool `json:"network,omitempty"`
	// Git lets a workspace-write command change the repository's .git
	// directories (git commit, add, checkout, ...), except what makes git
	// run code: their config files, hooks and info. The gate sets it only
	// for an allowed command whose analysis shows a git sub-command that
	// writes the repository; otherwise .git is read-only like the other
	// protected paths.
	Git bool `json:"git,omitempty"`
}

// IsZero reports whether nothing was decided.
func (c Confinement) IsZero() bool { return c == Confinement{} }

// OrStrictest returns c, or the strictest confinement when c is empty.
func (c Confinement) OrStrictest() Confinement {
	if c.Profile == "" {
		return Confinement{Profile: ProfileReadOnly}
	}
	return c
}

// String renders the confinement for prompts and logs:
// "read-only, no network".
func (c Confinement) String() string {
	c = c.OrStrictest()
	s := string(c.Profile)
	if c.Git && c.Profile == ProfileWorkspaceWrite {
		s += " (.git writable but its config and hooks)"
	}
	if c.Network {
		return s + ", network"
	}
	return s + ", no network"
}

// GateQuery is what the gate judges: the request in the session's context.
type GateQuery struct {
	SessionID      string
	Runtime        string
	Capabilities   Capabilities
	Mode           Mode
	PermissionMode PermissionMode
	Workspace      string
	Request        PermissionRequest
}

// Gate decides tool calls. tools.PermissionGate implements it; the engine
// owns only the contract so that it never imports a concrete gate.
type Gate interface {
	Check(ctx context.Context, q GateQuery) Verdict
	// Remember records a person's "allow for session" or "always allow"
	// answer, scoped by the gate to the normalised command or path.
	Remember(ctx context.Context, q GateQuery, scope AnswerScope) error
}

// gatePreparer is a gate with work it can do before its first check (the
// permission gate builds its models of shell commands, some milliseconds
// of CPU). A session asks for it when a runtime first reports its session
// started (an agent CLI does once it is up and has sent the model its
// request) or a tool call, both before any check, and not when the turn
// starts: an agent CLI starts then, and on a two-core machine the work
// took a core from kz and the CLI starting, 4 to 7 ms before the CLI ran.
type gatePreparer interface {
	Prepare()
}

// Answer is the final decision on a permission request.
type Answer struct {
	Decision Decision    `json:"decision"`
	Scope    AnswerScope `json:"scope,omitempty"`
	// Feedback is the person's message to the model with a denial.
	Feedback string `json:"feedback,omitempty"`
	// UpdatedInput is the tool input as the person edited it, if they did.
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
	Stage        string          `json:"stage,omitempty"`
	Rule         string          `json:"rule,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	// Confinement is the sandbox an allowed shell command runs under: the
	// gate's verdict decides it, also when the person said yes.
	Confinement Confinement `json:"confinement,omitzero"`
	// Patch is what the person took of a write in the review: of a patch
	// proposal (apply_patch), or of a runtime's write whose request says
	// SelectionContent. Its paths are those of the request's diff headers.
	// nil takes all of it.
	Patch *PatchSelection `json:"patch,omitempty"`
}

// Allowed reports whether the tool call may run.
func (a Answer) Allowed() bool { return a.Decision == DecisionAllow }
