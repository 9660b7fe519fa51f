package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/internal/memory"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/checkpoint"
	"github.com/kaizen-code/kz/tools/mcp"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/workspace"
	"github.com/kaizen-code/kz/tui"
)

// Options are what a session is opened with: the flags of kz and kz -p,
// parsed and checked.
type Options struct {
	// Interactive says a person answers the gate's questions (the TUI);
	// kz -p's session is not interactive.
	Interactive bool
	// OneShot says the session runs one message and ends (kz -p): the
	// agent CLI that served it is stopped as soon as the turn is done
	// with it (see engine.Config.Release), while kz stores the turn's
	// end, not after.
	OneShot bool
	// DataDir replaces the configured data directory (--data-dir).
	DataDir string
	// Runtime and Model choose the runtime ("auto": the strategy
	// chooses) and its model; empty, the resumed session's or the
	// configured default.
	Runtime, Model string
	// Mode and PermissionMode, when not empty, replace the configured
	// ones; Mode also replaces a resumed session's.
	Mode           engine.Mode
	PermissionMode engine.PermissionMode
	// Resume names the session to continue (a unique prefix is enough);
	// Continue continues the latest session of the workspace.
	Resume   string
	Continue bool
	// MaxCycles, BudgetUSD, Timeout and PatchRetries, when not nil,
	// replace the configured limits.
	MaxCycles    *int
	BudgetUSD    *float64
	Timeout      *time.Duration
	PatchRetries *int
	// Rules are the permission rules of the command line.
	Rules permission.Rules
	// Reasoning (--reasoning) replaces the reasoning setting of every
	// native and completion runtime.
	Reasoning string
	// Needs are capabilities the first turn needs beyond its mode's
	// (vision for kz -p --image): the selector picks a runtime that has
	// them, and a named runtime without them is refused.
	Needs engine.CapSet
	// Script is a JSONL script for the scripted runtime (--script).
	Script string
	// Demo opens the scripted demo in a scratch folder.
	Demo bool
	// Warn receives what kz warns about on the way: the configuration's
	// warnings, what the store recovered, a change a crash left
	// half-applied.
	Warn io.Writer
}

// App is one opened session with everything it runs on. Close releases it
// all, in the order the parts depend on each other.
type App struct {
	Env *Env
	// tracker checkpoints the session's tool calls; closed with it.
	tracker *checkpoint.Tracker
	// Store holds the session's history; Gate decides every tool call.
	Store *store.Store
	Gate  *permission.Gate
	// Runtimes are every runtime the session may run or switch to.
	Runtimes []engine.RuntimeEntry
	Session  *engine.Session
	// Resumed is the stored session being continued; zero for a new one.
	Resumed store.SessionInfo
	// Welcome is what the TUI shows first: how to use the demo, or, when
	// no runtime can serve, what kz found and how to enable each one.
	Welcome string
	// NoRuntime says that not one runtime can run here: the TUI opens on
	// its setup screen.
	NoRuntime bool
	// demo is set for the scripted demo, which offers no setup.
	demo bool

	sandbox       *sandbox.Sandbox
	claim         *store.Claim
	ws            *workspace.Workspace
	journal       *store.Writer
	removeDemo    func() error
	sessionClosed bool
	switches      *switchWatcher
	// reasoning is --reasoning as given, where the TUI's /reasoning
	// cycle starts.
	reasoning string
	// memory and gitStatus keep what turnContext loaded for the next
	// turn.
	memory    memory.Cache
	gitStatus memory.StatusCache
	mcp       *mcp.Manager
	// released are what is let go in the background before Close: the
	// CLI processes a one-shot session stopped once its turn was done
	// with them and the sandbox's scan caches (releaseRuntime), and the
	// checkpoint tracker's watcher (CloseSession). Close waits for them.
	released sync.WaitGroup
}

// NotStartedError is a failure of Open with what it knew by then: the
// session it resumes, and the runtime and model it chose (or those asked
// for, before it chose). kz -p names them in the final_result it prints
// for a turn that could not start.
type NotStartedError struct {
	SessionID, Runtime, Model string
	Err                       error
}

func (e *NotStartedError) Error() string { return e.Err.Error() }
func (e *NotStartedError) Unwrap() error { return e.Err }

// Open builds the session a command runs on: the configuration, the
// store, the gate, the OS sandbox, the runtimes, the patch reviewer and
// the session itself, claimed for this process. On failure it releases
// what it built.
func Open(ctx context.Context, o Options) (*App, error) {
	e, err := Load(o.DataDir)
	if err != nil {
		return nil, err
	}
	return OpenIn(ctx, e, o)
}

// OpenIn is Open on a configuration already loaded (Load with
// o.DataDir): kz loads it before the TUI's first frame, for the theme and
// the trust question, and opens the rest after that frame. e is the
// App's from then on.
func OpenIn(ctx context.Context, e *Env, o Options) (_ *App, err error) {
	a := &App{Env: e, reasoning: o.Reasoning}
	runtime, model := o.Runtime, o.Model
	defer func() {
		if err != nil {
			a.Close()
			err = &NotStartedError{SessionID: a.Resumed.ID, Runtime: runtime, Model: model, Err: err}
		}
	}()
	if o.Demo {
		if err := a.openDemo(o); err != nil {
			return nil, err
		}
	}
	e.Warn(o.Warn)
	mode, pmode := e.Config.Mode, e.Config.PermissionMode
	if o.Mode != "" {
		mode = o.Mode
	}
	if o.PermissionMode != "" {
		pmode = o.PermissionMode
	}
	if err := a.openParts(ctx, o); err != nil {
		return nil, err
	}
	id, prior, err := a.resume(ctx, o)
	if err != nil {
		return nil, err
	}
	if a.Resumed.ID != "" && o.Mode == "" && a.Resumed.Mode != "" {
		mode = a.Resumed.Mode
	}
	name, chosen, err := a.chooseRuntime(o, mode)
	if err != nil {
		return nil, err
	}
	runtime, model = name, chosen
	if _, cli := runtimes.Entry(a.Runtimes, name).Runtime.(engine.EarlyStarter); cli && a.sandbox != nil {
		// An agent CLI's process is the session's first confined
		// command: the sandbox searches the workspace for it now.
		a.sandbox.Prewarm()
	}
	reviewer, err := a.reviewer(ctx, id, o.Warn)
	if err != nil {
		return nil, err
	}
	if err := a.newSession(o, engine.Config{ID: id, Runtime: name, Model: chosen, Mode: mode, PermissionMode: pmode,
		Prior: prior, Patcher: reviewer}); err != nil {
		return nil, err
	}
	return a, nil
}

// openDemo points the app at a scratch folder: the demo's patch scene
// really writes files, and never in the person's project.
func (a *App) openDemo(o Options) error {
	dir, remove, err := tui.NewDemoWorkspace()
	if err != nil {
		return err
	}
	a.removeDemo, a.demo = remove, true
	a.Env.Workspace = dir
	// Nothing the demo does outlives it: "always allow" goes to a grants
	// file in the scratch folder, not the person's, and the demo's
	// sessions to a scratch database unless --data-dir names one.
	// Settings already read from the user config (the theme) still
	// apply.
	a.Env.Paths.UserConfig = filepath.Join(dir, ".kz-demo", "config", "config.toml")
	if o.DataDir == "" {
		a.Env.DataDir = filepath.Join(dir, ".kz-demo", "data")
	}
	a.Welcome = tui.DemoWelcome + "\nIt works in a scratch folder, " + dir + ", removed when you quit: your project is not touched."
	return nil
}

// openParts opens what the session runs on: the store, the gate, the OS
// sandbox every shell command of the session (kz's bash, a proposal's
// VERIFY) runs in under the profile of the gate's answer, and the
// runtimes.
//
// The store opens (its file, the schema check, a migration) while the
// gate and the sandbox (its private directories) are built: neither needs
// the other, each costs a few milliseconds of file system work, and all of
// it comes before an agent CLI can start. The store's error is reported
// first, as when they were opened one after the other; on any error the
// caller closes what did open.
func (a *App) openParts(ctx context.Context, o Options) (err error) {
	var storeErr error
	var opened sync.WaitGroup
	opened.Go(func() { a.Store, storeErr = a.Env.OpenStore(ctx, o.Warn) })
	a.Gate, err = a.Env.Gate(!o.Interactive, o.Rules)
	if err == nil {
		a.sandbox, err = a.Env.osSandbox(a.Gate, o.OneShot)
	}
	if err == nil && o.OneShot && a.sandbox != nil {
		// A one-shot kz's first confined command (an agent CLI's
		// process, the first shell call) comes within milliseconds: an
		// earlier kz's search of the workspace is read now, while the
		// store opens (Sandbox.Prewarm under Policy.NoWatch).
		a.sandbox.Prewarm()
	}
	opened.Wait()
	if storeErr != nil {
		return storeErr
	}
	if err != nil {
		return err
	}
	if o.Demo {
		a.Runtimes, err = demoRuntimes()
		return err
	}
	a.mcp = a.Env.MCP(a.Gate)
	a.Runtimes, err = a.Env.Runtimes(RuntimesFor{Script: o.Script, Runtime: o.Runtime, Store: a.Store, Sandbox: a.sandbox, Gate: a.Gate,
		Reasoning: o.Reasoning, MCP: a.mcp})
	if err != nil {
		return err
	}
	return a.Env.Config.ValidateRuntimeNames(func(n string) bool { return runtimes.Entry(a.Runtimes, n).Runtime != nil })
}

// resume finds the session to continue, if any, and claims the session's
// id for this process. The claim comes before the history is read and
// before any turn: a second kz on the session would number its events
// from the same last sequence number and lose its turn. The claim dies
// with the process.
func (a *App) resume(ctx context.Context, o Options) (id string, prior *engine.Prior, err error) {
	switch {
	case o.Resume != "":
		if a.Resumed, err = a.Store.Session(ctx, o.Resume); err != nil {
			return "", nil, err
		}
	case o.Continue:
		if a.Resumed, err = a.Store.LatestSession(ctx, a.Env.Workspace); err != nil {
			return "", nil, fmt.Errorf("%w to continue", err)
		}
	}
	id = a.Resumed.ID
	if id == "" {
		id = engine.NewID()
	}
	if a.claim, err = a.Store.ClaimSession(ctx, id); err != nil {
		return "", nil, err
	}
	if a.Resumed.ID != "" {
		if prior, err = a.Store.Prior(ctx, a.Resumed.ID); err != nil {
			return "", nil, err
		}
	}
	return id, prior, nil
}

// chooseRuntime picks the session's runtime and model. The TUI still opens
// without a usable runtime: it shows what kz found and how to enable each
// one.
func (a *App) chooseRuntime(o Options, mode engine.Mode) (string, string, error) {
	if o.Demo {
		return tui.DemoRuntime, "", nil
	}
	name, model, err := a.Env.choose(a.Runtimes, o, mode, a.Resumed)
	if err != nil && !o.Interactive && errors.Is(err, engine.ErrNoCandidate) {
		// Not one runtime runs here: say why for each, and the way out,
		// rather than which capabilities the mode needs.
		if nerr := noRuntime(a.Runtimes); nerr != nil {
			return "", "", nerr
		}
	}
	if err == nil || !o.Interactive || len(a.Runtimes) == 0 {
		return name, model, err
	}
	a.Welcome = tui.FirstRunText(runtimes.Infos(a.Runtimes))
	a.NoRuntime = errors.Is(err, engine.ErrNoCandidate) && noRuntime(a.Runtimes) != nil
	if !errors.Is(err, engine.ErrNoCandidate) {
		a.Welcome = err.Error() + "\n\n" + a.Welcome
	}
	return a.Runtimes[0].Runtime.Name(), "", nil
}

// reviewer opens the workspace and builds the patch reviewer of session
// id: proposals are validated against the gate's safety checks path by
// path (both sides of a rename, symlinks resolved) before any preview, and
// their verification commands run in the sandbox. A change a crash left
// half-applied is restored first.
func (a *App) reviewer(ctx context.Context, id string, warn io.Writer) (*patch.Reviewer, error) {
	ws, err := workspace.Open(a.Env.Workspace)
	if err != nil {
		return nil, err
	}
	a.ws = ws
	applier := a.Env.applier(ws, a.Store, id)
	applier.Guard = patch.GateGuard{Gate: a.Gate, Workspace: ws.Dir()}
	if restored, err := applier.Recover(ctx); err != nil {
		_, _ = fmt.Fprintf(warn, "kz: warning: could not recover an interrupted change: %v\n", err)
	} else if len(restored) > 0 {
		_, _ = fmt.Fprintf(warn, "kz: warning: restored %d change(s) a crash left half-applied: %s\n", len(restored), strings.Join(restored, ", "))
	}
	return &patch.Reviewer{Applier: applier, Run: patch.ShellRunner(a.sandbox, ws.Dir(), childenv.Build(os.Environ(), childenv.Spec{}), 10*time.Minute, 64<<10)}, nil
}

// newSession creates the session over its parts, with the limits of the
// configuration and the flags. A new session's row is written with its
// first events, so a session that never got a turn leaves nothing behind.
func (a *App) newSession(o Options, c engine.Config) error {
	cfg := a.Env.Config
	limits := engine.Limits{MaxCycles: cfg.Limits.MaxCycles, BudgetUSD: cfg.Limits.BudgetUSD, Timeout: cfg.Limits.Timeout.Duration}
	if o.MaxCycles != nil {
		limits.MaxCycles = *o.MaxCycles
	}
	if o.BudgetUSD != nil {
		limits.BudgetUSD = *o.BudgetUSD
	}
	if o.Timeout != nil {
		limits.Timeout = *o.Timeout
	}
	patchRetries := cfg.PatchRetries
	if o.PatchRetries != nil {
		patchRetries = o.PatchRetries
	}
	a.journal = a.Store.NewWriter()
	c.Workspace, c.Journal, c.Runtimes, c.Gate = a.Env.Workspace, a.journal, a.Runtimes, a.Gate
	c.Interactive, c.Limits, c.PatchRetries = o.Interactive, limits, config.EnginePatchRetries(patchRetries)
	c.Subagents = cfg.Subagents.Engine()
	c.Failover = runtimes.Failover(cfg.Failover, a.Runtimes, c.Runtime)
	// Every runtime's tokens are priced from the same catalog the native
	// runtime uses, [[models]] entries included, so that the budget and the
	// cost shown hold on Codex and ACP agents too.
	cat, err := llm.CatalogFrom(cfg.Models)
	if err != nil {
		return err
	}
	c.Pricer = cat
	// What a failover carries to the next runtime is redacted as the
	// store redacts what it persists.
	c.Redact = store.Redact
	c.Context, c.Environment = a.turnContext, a.turnEnvironment
	if o.OneShot {
		c.Release = a.releaseRuntime
	}
	if a.Env.hooks != nil {
		// The prompt and notification hooks; PreToolUse runs in the gate.
		c.Hooks = a.Env.hooks
	}
	if a.ws != nil {
		// Every tool call of every runtime is checkpointed, so that kz
		// undo and /rewind can put back what it changed.
		a.tracker = newTracker(a.Store, a.ws, a.Env.unrecorded(), a.sandbox != nil && a.sandbox.Status().Kind == sandbox.KindBubblewrap)
		c.Checkpoints = a.tracker
	}
	sess, err := engine.NewSession(c)
	if err != nil {
		return err
	}
	a.Session = sess
	a.watchSwitches()
	if a.Resumed.ID == "" {
		st := sess.State()
		a.journal.CreateLazily(store.SessionInfo{ID: sess.ID(), Workspace: a.Env.Workspace, Runtime: st.Runtime, Model: st.Model, Mode: c.Mode})
	}
	return nil
}

// CloseSession closes the session: it interrupts a running turn, waits
// for it and flushes what it journaled. It returns the session's error;
// a second call does nothing.
func (a *App) CloseSession(ctx context.Context) error {
	if a.Session == nil || a.sessionClosed {
		return nil
	}
	a.sessionClosed = true
	err := a.Session.Close(context.WithoutCancel(ctx))
	a.switches.stop()
	if a.tracker != nil {
		// After the session: its last turn's scan is done. Closing its
		// change watcher's inotify descriptor waits for the kernel (some
		// 15 ms with a watch on each of 1,000 directories), so it runs
		// while kz closes the rest; Close waits for it.
		t := a.tracker
		a.released.Go(func() { _ = t.Close() })
	}
	return err
}

// Close closes the session if it is still open, then everything it ran
// on. The runtimes' CLIs and the MCP servers are stopped while kz closes
// its own parts (the journal, the workspace, the store): a CLI's polite
// shutdown (stdin closed, then waiting for it to exit, some 50-100 ms for
// Claude Code) no longer comes before them, so kz -p returns as soon as
// the CLI is gone, or, in its own sandbox, as soon as it has begun to
// exit (the kernel takes back its memory after kz: proc.Tree.Stop). Two
// things wait for the CLIs: the claim, so that no other kz resumes the
// CLI's native session while the old process may still write it, and the
// sandbox, which must outlive the CLIs confined in it. The demo's scratch
// folder goes last. Errors are not reported: nothing more can be done
// about them.
func (a *App) Close() {
	_ = a.CloseSession(context.Background())
	var stopped sync.WaitGroup
	stopped.Go(func() {
		a.released.Wait()
		runtimes.Close(a.Runtimes)
		// The MCP servers are the session's: none outlives it.
		a.mcp.Close()
	})
	if a.sandbox != nil {
		// Closing its scan caches' inotify descriptors waits for the
		// kernel; it overlaps with the CLIs' exit instead of following it.
		stopped.Go(a.sandbox.ForgetScans)
	}
	if a.journal != nil {
		_ = a.journal.Close()
	}
	if a.ws != nil {
		_ = a.ws.Close()
	}
	if a.Store != nil {
		_ = a.Store.Close()
	}
	stopped.Wait()
	if a.claim != nil {
		_ = a.claim.Release()
	}
	if a.sandbox != nil {
		_ = a.sandbox.Close()
	}
	if a.removeDemo != nil {
		_ = a.removeDemo()
	}
}

// TUI is the services the TUI takes from the app: undo, the session
// picker, the grants, the @ mentions, the stored history of a reopened
// session, with the session and its workspace.
// The caller adds what is its own (theme, custom commands).
func (a *App) TUI() tui.Options {
	o := tui.Options{Session: a.Session, Welcome: a.Welcome, Workspace: a.Env.Workspace, HunkSelection: true,
		Notify:   tui.NotifyMode(a.Env.Config.Notify),
		Undo:     undoer{e: a.Env, st: a.Store, ws: a.ws, sessionID: a.Session.ID(), sess: a.Session},
		Sessions: a.Store,
		Grants:   grantManager{gate: a.Gate, file: config.NewGrantsFile(a.Env.Paths)},
		Mentions: mentionReader{sess: a.Session, env: tools.NewEnv(a.ws, a.Session.ID(), nil)},
		Memory:   memoryBook{a}, Reasoning: reasoningSetter{a}, ReasoningLevel: cycleLevel(a.reasoning)}
	if a.mcp != nil {
		o.MCP = mcpLister{a.mcp}
	}
	if a.Resumed.ID != "" {
		// A reopened session is shown from its stored events, as it was
		// shown live.
		o.History = a.Store
	}
	if !a.demo {
		// The demo's user config is a scratch file: it offers no setup.
		o.Setup, o.OpenSetup = a.SetupService(), a.NoRuntime
	}
	return o
}

// CommandDirs are the directories of the custom slash commands: the
// user's, and the project's only when the folder is trusted (project
// commands are prompts someone else wrote).
func (a *App) CommandDirs() []string {
	dirs := []string{filepath.Join(filepath.Dir(a.Env.Paths.UserConfig), "commands")}
	if a.Env.Config.ProjectTrusted {
		dirs = append(dirs, filepath.Join(a.Env.Workspace, ".kz", "commands"))
	}
	return dirs
}
