// Command kz is a terminal coding assistant: one event stream, one
// permission gate and one session history over many agent runtimes.
//
// main.go only parses flags, loads configuration, wires the packages
// together and maps outcomes to exit codes; the logic lives in the packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/config"
	"github.com/kaizen-code/kz/engine/headless"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/workspace"
	"github.com/kaizen-code/kz/tui"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `kz — a terminal coding assistant over many agent runtimes

Usage:
  kz [flags]                       open the interactive session (TUI)
  kz -p PROMPT [flags]             run one turn headless and print it
  kz sessions list                 list stored sessions, newest first
  kz sessions show ID              show a session's turns and their status
  kz sessions export ID [--format md|json]
  kz sessions delete ID
  kz runtimes [--json]             configured runtimes, availability, capabilities
  kz doctor [--salvage]            check the session database; --salvage copies what
                                   can be read of a damaged one into a fresh one
  kz trust                         trust this folder's .kz/config.toml as it is now
  kz undo [ID]                     restore the files of the last applied change
  kz policy check --tool T --input JSON [--mode M] [--permission-mode P]
                 [--allow R] [--ask R] [--deny R] [--json]
                                   what the permission gate decides, and why
  kz version

Flags for kz and kz -p:
  -p, --print PROMPT       run PROMPT as one headless turn; -p - reads the
                           prompt from standard input (for long prompts)
  --runtime NAME           runtime to use, or auto (default: config, then auto)
  --model MODEL            model of the runtime
  --mode MODE              full-autonomous | patch-proposal | analysis-only
  --permission-mode PM     ask | deny | accept-edits | yolo (headless never
                           waits: an ask becomes a deny unless PM allows it)
  --output-format F        text | json | stream-json (default text)
  --continue               continue the latest session of this folder
  --resume ID              continue session ID (a unique prefix is enough)
  --max-cycles N           stop a turn after N model cycles (0: no limit)
  --budget-usd X           stop a turn that costs more than X USD (0: no limit)
  --allow RULE             allow tool calls matching RULE for this run
  --ask RULE               ask before tool calls matching RULE
  --deny RULE              deny tool calls matching RULE (repeatable, like
                           --allow and --ask; Claude Code rule syntax, e.g.
                           --deny 'Bash(rm:*)' --allow 'Bash(git status:*)')
  --timeout D              stop a turn after D, e.g. 90s or 10m (0: no limit)
  --patch-retries N        in patch-proposal mode, send a failed proposal
                           back to the model at most N times (0-10, default 2)
  --script FILE            JSONL script for the scripted runtime
  --data-dir DIR           where kz keeps its database (default $XDG_DATA_HOME/kz)
  --demo                   open the TUI on a scripted demo session (no model needed)
  --theme NAME             dark | light | high-contrast (NO_COLOR is honoured)

Exit codes:
  0  the turn completed
  1  error (the turn failed, or kz could not run it)
  2  usage error (bad flags or arguments)
  3  the turn was interrupted or hit a limit (max cycles, budget, timeout),
     or kz -p's output was closed early (e.g. piped into head): the turn is
     then recorded as interrupted

Configuration: $XDG_CONFIG_HOME/kz/config.toml and .kz/config.toml (see README.md).
`

func main() {
	// kz re-executes itself as the Landlock wrapper of sandboxed commands
	// where bubblewrap cannot run.
	if ossandbox.IsWrapperInvocation(os.Args) {
		os.Exit(ossandbox.WrapperMain(os.Args))
	}
	os.Exit(runProcess(os.Args[1:]))
}

// subcommands are the words dispatch takes as a command before any flag.
var subcommands = map[string]bool{"version": true, "sessions": true, "runtimes": true, "trust": true, "undo": true, "policy": true, "doctor": true}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "version", "--version":
			if len(args) > 1 {
				return usagef("kz %s takes no arguments", args[0])
			}
			_, _ = fmt.Fprintf(stdout, "kz %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		case "help", "-h", "--help":
			_, _ = fmt.Fprint(stdout, usage)
			return nil
		case "sessions":
			return cmdSessions(ctx, args[1:], stdout)
		case "runtimes":
			return cmdRuntimes(args[1:], stdout, stderr)
		case "trust":
			return cmdTrust(args[1:], stdout)
		case "undo":
			return cmdUndo(ctx, args[1:], stdout, stderr)
		case "policy":
			return cmdPolicy(ctx, args[1:], stdout)
		case "doctor":
			return cmdDoctor(ctx, args[1:], stdout)
		}
		if !strings.HasPrefix(args[0], "-") {
			return usagef("unknown command %q", args[0])
		}
	}
	// The session picker of the TUI ends the program with a request to
	// open another session; kz then starts again on it.
	for {
		err := cmdMain(ctx, args, stdout, stderr)
		var rr *tui.ResumeRequest
		if !errors.As(err, &rr) {
			return err
		}
		args = withResume(args, rr.SessionID)
	}
}

// withResume replaces --continue/--resume in args with --resume id.
func withResume(args []string, id string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--continue" || a == "-continue":
		case a == "--resume" || a == "-resume":
			i++
		case strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "-resume="):
		default:
			out = append(out, a)
		}
	}
	return append(out, "--resume", id)
}

// options are the flags of kz and kz -p.
type options struct {
	prompt, runtime, model, mode, pmode, format, resume, script, dataDir, theme string
	cont, demo                                                                  bool
	maxCycles, patchRetries                                                     int
	budget                                                                      float64
	timeout                                                                     time.Duration
	set                                                                         map[string]bool
	rules                                                                       cliRules
}

func parseMain(args []string) (*options, error) {
	o := &options{set: map[string]bool{}}
	fs := flag.NewFlagSet("kz", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.prompt, "p", "", "")
	fs.StringVar(&o.prompt, "print", "", "")
	fs.StringVar(&o.runtime, "runtime", "", "")
	fs.StringVar(&o.model, "model", "", "")
	fs.StringVar(&o.mode, "mode", "", "")
	fs.StringVar(&o.pmode, "permission-mode", "", "")
	fs.StringVar(&o.format, "output-format", "text", "")
	fs.StringVar(&o.resume, "resume", "", "")
	fs.StringVar(&o.script, "script", "", "")
	fs.StringVar(&o.dataDir, "data-dir", "", "")
	fs.BoolVar(&o.cont, "continue", false, "")
	fs.BoolVar(&o.demo, "demo", false, "")
	fs.StringVar(&o.theme, "theme", "", "")
	fs.Var(cliflag.Int{P: &o.maxCycles}, "max-cycles", "")
	fs.Var(cliflag.Int{P: &o.patchRetries}, "patch-retries", "")
	fs.Var(cliflag.USD{P: &o.budget}, "budget-usd", "")
	fs.Var(durationFlag{cliflag.Duration{P: &o.timeout}}, "timeout", "")
	o.rules.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{cliflag.Message(err)}
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if fs.NArg() > 0 {
		if sub := fs.Arg(0); subcommands[sub] && !o.set["p"] && !o.set["print"] {
			// kz --data-dir D sessions list: the flags were meant for the
			// subcommand, which dispatch only recognises first.
			flags := args[:len(args)-fs.NArg()]
			return nil, usagef("subcommands come first: kz %s", quoteArgs(append(fs.Args(), flags...)))
		}
		return nil, usagef("unexpected argument %q (quote the prompt: kz -p \"...\")", fs.Arg(0))
	}
	if err := requireValues(fs, "runtime", "model", "mode", "permission-mode", "output-format", "resume", "script", "data-dir", "theme"); err != nil {
		return nil, err
	}
	switch {
	case o.maxCycles < 0:
		return nil, usagef("--max-cycles cannot be negative")
	case o.set["patch-retries"] && config.ValidatePatchRetries(o.patchRetries) != nil:
		return nil, usagef("--patch-retries: %v", config.ValidatePatchRetries(o.patchRetries))
	case o.budget < 0:
		return nil, usagef("--budget-usd cannot be negative")
	case o.timeout < 0:
		return nil, usagef("--timeout cannot be negative")
	case o.cont && o.resume != "":
		return nil, usagef("--continue and --resume exclude each other")
	case (o.set["p"] || o.set["print"]) && strings.TrimSpace(o.prompt) == "":
		return nil, usagef("-p needs a prompt")
	}
	return o, nil
}

// env is what every command that touches sessions needs.
type env struct {
	workspace string
	paths     config.Paths
	cfg       *config.Config
	dataDir   string
}

func loadEnv(dataDirFlag string) (*env, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("find working directory: %w", err)
	}
	ws, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return nil, fmt.Errorf("resolve working directory: %w", err)
	}
	paths, err := config.DefaultPaths(ws)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(paths)
	if err != nil {
		return nil, err
	}
	e := &env{workspace: ws, paths: paths, cfg: cfg, dataDir: cfg.DataDir}
	if dataDirFlag != "" {
		e.dataDir, err = filepath.Abs(dataDirFlag)
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	return e, nil
}

func (e *env) openStore(ctx context.Context, stderr io.Writer) (*store.Store, error) {
	st, err := store.Open(ctx, filepath.Join(e.dataDir, "kz.db"))
	if err != nil {
		if store.IsReadOnly(err) {
			return nil, fmt.Errorf("the data dir %s is read-only, and kz must write its sessions there: make it writable or choose another with --data-dir (%w)", e.dataDir, err)
		}
		return nil, err
	}
	if st.Recovered != "" {
		_, _ = fmt.Fprintf(stderr, "kz: warning: %s\n", st.Recovered)
	}
	return st, nil
}

// openStoreForReading is openStore for commands that only show sessions:
// when the data dir is read-only they still work, on the database as it is
// (see store.OpenReadOnly), with a warning.
func (e *env) openStoreForReading(ctx context.Context, stderr io.Writer) (*store.Store, error) {
	st, err := store.Open(ctx, filepath.Join(e.dataDir, "kz.db"))
	if err == nil {
		if st.Recovered != "" {
			_, _ = fmt.Fprintf(stderr, "kz: warning: %s\n", st.Recovered)
		}
		return st, nil
	}
	if !store.IsReadOnly(err) {
		return nil, err
	}
	ro, rerr := store.OpenReadOnly(ctx, filepath.Join(e.dataDir, "kz.db"))
	if rerr != nil {
		return nil, fmt.Errorf("the data dir %s is read-only and its database cannot be read as it is: %w", e.dataDir, rerr)
	}
	_, _ = fmt.Fprintf(stderr, "kz: warning: the data dir %s is read-only; showing the sessions as they are (a turn of a kz that was killed shows as running)\n", e.dataDir)
	return ro, nil
}

func cmdMain(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseMain(args)
	if err != nil {
		return err
	}
	// The sandbox probe runs bwrap once (some 10-30 ms); it overlaps with
	// loading the configuration and opening the store instead of adding
	// to them. Its result is cached for whoever needs it first.
	go ossandbox.Probe()
	format, err := headless.ParseFormat(o.format)
	if err != nil {
		return usagef("%v", err)
	}
	// json promises one final_result on stdout, even for a turn that could
	// not start: a busy or missing session, a bad script or config, an
	// unusable data dir, no capable runtime. headless.Run prints its own
	// (including for a turn that cannot start inside it), so printed is set
	// once it is called; usage errors print none, as for every command.
	printed := false
	var resumed store.SessionInfo
	runtimeName, modelName := o.runtime, o.model
	defer func() {
		var ue usageError
		var ee exitError
		if err == nil || printed || o.prompt == "" || errors.As(err, &ue) || errors.As(err, &ee) {
			return
		}
		ev := headless.NotStarted(resumed.ID, runtimeName, modelName, err)
		if ie := interrupted(ctx, err); ie != nil {
			err = ie
			ev.Status, ev.Text, ev.ErrorKind = string(engine.StatusInterrupted), ie.Error(), ""
		}
		if werr := headless.WriteNotStarted(stdout, format, ev); werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	if o.prompt == "-" {
		if o.prompt, err = readPrompt(ctx, stdin); err != nil {
			return err
		}
	}
	e, err := loadEnv(o.dataDir)
	if err != nil {
		return err
	}
	demoDir := ""
	if o.demo {
		// The demo works in a scratch folder, never in the person's
		// project: its patch scene really writes files.
		dir, remove, err := tui.NewDemoWorkspace()
		if err != nil {
			return err
		}
		defer func() { _ = remove() }()
		e.workspace, demoDir = dir, dir
		// Nothing the demo does outlives it: "always allow" goes to a
		// grants file in the scratch folder, not the person's, and the
		// demo's sessions to a scratch database unless --data-dir names
		// one. Settings already read from the user config (the theme)
		// still apply.
		e.paths.UserConfig = filepath.Join(dir, ".kz-demo", "config", "config.toml")
		if o.dataDir == "" {
			e.dataDir = filepath.Join(dir, ".kz-demo", "data")
		}
	}
	for _, w := range e.cfg.Warnings {
		_, _ = fmt.Fprintf(stderr, "kz: warning: %s\n", w)
	}
	mode, pmode := e.cfg.Mode, e.cfg.PermissionMode
	if o.mode != "" {
		if mode, err = engine.ParseMode(o.mode); err != nil {
			return usagef("--mode: %v", err)
		}
	}
	if o.pmode != "" {
		if pmode, err = engine.ParsePermissionMode(o.pmode); err != nil {
			return usagef("--permission-mode: %v", err)
		}
	}
	interactive := o.prompt == ""
	st, err := e.openStore(ctx, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	gate, err := e.gate(!interactive, o.rules.Rules)
	if err != nil {
		return err
	}
	// Every shell command of the session (kz's bash, a proposal's
	// VERIFY) runs in this sandbox, under the profile of the gate's
	// answer; its private temp dir goes with the session.
	sb, err := e.sandbox(gate)
	if err != nil {
		return err
	}
	defer func() { _ = sb.Close() }()
	var entries []engine.RuntimeEntry
	if o.demo {
		if entries, err = tui.DemoRuntimes(); err != nil {
			return err
		}
	} else if entries, err = e.runtimeEntries(o.script, o.runtime, st, sb, gate, false); err != nil {
		return err
	} else if err := e.cfg.ValidateRuntimeNames(func(n string) bool { return runtimes.Entry(entries, n).Runtime != nil }); err != nil {
		return err
	}

	var prior *engine.Prior
	switch {
	case o.resume != "":
		if resumed, err = st.Session(ctx, o.resume); err != nil {
			return err
		}
	case o.cont:
		if resumed, err = st.LatestSession(ctx, e.workspace); err != nil {
			return fmt.Errorf("%w to continue", err)
		}
	}
	id := resumed.ID
	if id == "" {
		id = engine.NewID()
	}
	// The session is claimed before its history is read and before any
	// turn: a second kz on it would number its events from the same last
	// sequence number and lose its turn. The claim dies with the process.
	claim, err := st.ClaimSession(ctx, id)
	if err != nil {
		return err
	}
	defer func() { _ = claim.Release() }()
	if resumed.ID != "" {
		if prior, err = st.Prior(ctx, resumed.ID); err != nil {
			return err
		}
		if !o.set["mode"] && resumed.Mode != "" {
			mode = resumed.Mode
		}
	}

	welcome := ""
	name, model, err := choose(e.cfg, entries, o, mode, resumed)
	switch {
	case o.demo:
		name, model = tui.DemoRuntime, ""
		welcome = tui.DemoWelcome + "\nIt works in a scratch folder, " + demoDir + ", removed when you quit: your project is not touched."
	case err != nil && interactive && len(entries) > 0:
		// The TUI still opens without a usable runtime: it shows what kz
		// found and how to enable each one.
		name, model = entries[0].Runtime.Name(), ""
		welcome = tui.FirstRunText(runtimes.Infos(entries))
		if !errors.Is(err, engine.ErrNoCandidate) {
			welcome = err.Error() + "\n\n" + welcome
		}
	case err != nil:
		// The deferred check prints the final_result json promises.
		return err
	}
	runtimeName, modelName = name, model
	limits := engine.Limits{MaxCycles: e.cfg.Limits.MaxCycles, BudgetUSD: e.cfg.Limits.BudgetUSD, Timeout: e.cfg.Limits.Timeout.Duration}
	if o.set["max-cycles"] {
		limits.MaxCycles = o.maxCycles
	}
	if o.set["budget-usd"] {
		limits.BudgetUSD = o.budget
	}
	if o.set["timeout"] {
		limits.Timeout = o.timeout
	}
	patchRetries := e.cfg.PatchRetries
	if o.set["patch-retries"] {
		patchRetries = &o.patchRetries
	}

	ws, err := workspace.Open(e.workspace)
	if err != nil {
		return err
	}
	defer func() { _ = ws.Close() }()
	applier := e.applier(ws, st, id)
	// Proposals are validated against the gate's safety checks path by
	// path (both sides of a rename, symlinks resolved) before any preview.
	applier.Guard = patch.GateGuard{Gate: gate, Workspace: ws.Dir()}
	if restored, err := applier.Recover(ctx); err != nil {
		_, _ = fmt.Fprintf(stderr, "kz: warning: could not recover an interrupted change: %v\n", err)
	} else if len(restored) > 0 {
		_, _ = fmt.Fprintf(stderr, "kz: warning: restored %d change(s) a crash left half-applied: %s\n", len(restored), strings.Join(restored, ", "))
	}
	reviewer := &patch.Reviewer{Applier: applier, Run: patch.ShellRunner(sb, ws.Dir(), childenv.Build(os.Environ(), childenv.Spec{}), 10*time.Minute, 64<<10)}

	defer runtimes.Close(entries)
	w := st.NewWriter()
	defer func() { _ = w.Close() }()
	sess, err := engine.NewSession(engine.Config{
		ID: id, Workspace: e.workspace, Journal: w, Runtimes: entries, Runtime: name, Model: model,
		Mode: mode, PermissionMode: pmode, Interactive: interactive, Limits: limits,
		Failover: runtimes.Failover(e.cfg.Failover, entries, name), Prior: prior, Patcher: reviewer, Gate: gate,
		PatchRetries: config.EnginePatchRetries(patchRetries),
	})
	if err != nil {
		return err
	}
	if resumed.ID == "" {
		st := sess.State()
		w.CreateLazily(store.SessionInfo{ID: sess.ID(), Workspace: e.workspace, Runtime: st.Runtime, Model: st.Model, Mode: mode})
	}
	if interactive {
		dirs := []string{filepath.Join(filepath.Dir(e.paths.UserConfig), "commands")}
		if e.cfg.ProjectTrusted {
			// Project commands are prompts someone else wrote: only a
			// trusted folder's are offered.
			dirs = append(dirs, filepath.Join(e.workspace, ".kz", "commands"))
		}
		commands, cerr := tui.LoadCommands(dirs...)
		if cerr != nil {
			_, _ = fmt.Fprintf(stderr, "kz: warning: custom commands: %v\n", cerr)
		}
		err := tui.Run(ctx, tui.Options{Session: sess, Theme: firstNonEmpty(o.theme, e.cfg.Theme), Welcome: welcome,
			Undo: undoer{e: e, st: st, ws: ws, sessionID: id}, Sessions: st, Workspace: e.workspace, Commands: commands,
			HunkSelection: true, Grants: grantManager{gate: gate, file: config.NewGrantsFile(e.paths)},
			Mentions: mentionReader{gate: gate, env: tools.NewEnv(ws, id, nil), sess: sess, dir: ws.Dir()}})
		if cerr := sess.Close(context.WithoutCancel(ctx)); err == nil {
			err = cerr
		}
		return err
	}
	printed = true
	final, runErr := headless.Run(ctx, sess, o.prompt, format, stdout, stderr)
	cerr := sess.Close(context.WithoutCancel(ctx))
	if errors.Is(context.Cause(ctx), errOutputClosed) && final.Type != "" {
		// Whoever read the output stopped reading (kz -p … | head): the
		// turn was interrupted and recorded so, or had already ended.
		// The failed writes are not an error of their own.
		if final.Status != string(engine.StatusComplete) {
			_, _ = fmt.Fprintf(stderr, "kz: the output was closed, so the turn was interrupted; it is recorded in session %s\n", sess.ID())
		}
		if cerr != nil {
			return cerr
		}
		if code := headless.ExitCode(engine.Status(final.Status)); code != 0 {
			return exitError{code}
		}
		return nil
	}
	if runErr != nil {
		return runErr
	}
	if cerr != nil {
		return cerr
	}
	if format == headless.FormatText {
		_, _ = fmt.Fprintf(stderr, "kz: session %s\n", sess.ID())
	}
	if code := headless.ExitCode(engine.Status(final.Status)); code != 0 {
		return exitError{code}
	}
	return nil
}

// sandbox builds the session's OS sandbox: the workspace and the
// configured writable directories ([sandbox] writable) are what
// workspace-write commands may write; kz's own config and data
// directories, and the paths Read deny rules name, are hidden from every
// command.
func (e *env) sandbox(gate *permission.Gate) (*ossandbox.Sandbox, error) {
	hidden := []string{filepath.Dir(e.paths.UserConfig), e.dataDir}
	// What Read deny rules name is hidden too: the gate cannot stop
	// `grep -r x .` from reading a denied directory below ".", the
	// kernel can.
	hidden = append(hidden, gate.ReadDenyRoots(e.workspace)...)
	if e.paths.DataDir != e.dataDir {
		hidden = append(hidden, e.paths.DataDir)
	}
	sb, err := ossandbox.New(ossandbox.Policy{Workspace: e.workspace, Writable: e.cfg.Sandbox.Writable, Hidden: hidden})
	if err != nil && len(e.cfg.Sandbox.Writable) > 0 {
		return nil, fmt.Errorf("%w (check [sandbox] writable in %s)", err, e.paths.UserConfig)
	}
	return sb, err
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runtimeEntries builds every runtime; --script adds (or replaces) the
// scripted runtime named by --runtime, "scripted" by default.
func (e *env) runtimeEntries(script, runtimeFlag string, st *store.Store, sb *ossandbox.Sandbox, gate *permission.Gate, probe bool) ([]engine.RuntimeEntry, error) {
	opt := runtimes.Options{Workspace: e.workspace, ConfigDir: filepath.Dir(e.paths.UserConfig), Probe: probe, Sandbox: sb}
	if gate != nil {
		opt.DenyTool, opt.ReadPolicy = gate.DeniesTool, gate
	}
	if sb != nil {
		// The agent CLIs run confined too: what they run after kz's yes
		// cannot write outside the workspace or into .git.
		opt.Confiner = agentcli.NewConfiner(sb)
	}
	if st != nil {
		opt.Snapshots, opt.Artifacts = runtimes.StoreSnapshots{Store: st}, st
	}
	entries, err := runtimes.BuildAll(e.cfg, opt)
	if err != nil {
		return nil, err
	}
	if script == "" {
		if runtimeFlag == "scripted" && runtimes.Entry(entries, "scripted").Runtime == nil {
			return nil, usagef("the scripted runtime needs --script FILE")
		}
		return entries, nil
	}
	name := runtimeFlag
	if name == "" || name == "auto" {
		name = "scripted"
	}
	if fi, err := os.Stat(script); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("--script %s: is a directory, not a script file", script)
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--script %s: no such file", script)
	}
	rt, err := scripted.Load(name, script)
	if err != nil {
		return nil, err
	}
	out := []engine.RuntimeEntry{{Runtime: rt, Models: []string{rt.Model()}, FixedModels: true}}
	for _, x := range entries {
		if x.Runtime.Name() != name {
			out = append(out, x)
		}
	}
	return out, nil
}

// choose picks the runtime and model for a turn: --runtime (or auto), the
// resumed session's runtime, the configured default, then the strategy.
func choose(cfg *config.Config, entries []engine.RuntimeEntry, o *options, mode engine.Mode, resumed store.SessionInfo) (string, string, error) {
	var cands []engine.Candidate
	for _, x := range entries {
		m := ""
		if len(x.Models) > 0 {
			m = x.Models[0]
		}
		cands = append(cands, engine.Candidate{Runtime: x.Runtime.Name(), Model: m, Capabilities: x.Runtime.Capabilities(m), Unavailable: x.Unavailable})
	}
	strategy, preferred := cfg.Strategy, cfg.DefaultRuntime
	switch {
	case o.runtime != "" && o.runtime != "auto":
		strategy, preferred = engine.StrategyPreferred, o.runtime
	case o.runtime == "auto":
		strategy, preferred = engine.StrategyAuto, cfg.DefaultRuntime
	case o.script != "":
		strategy, preferred = engine.StrategyPreferred, "scripted"
	case resumed.Runtime != "":
		strategy, preferred = engine.StrategyAuto, resumed.Runtime
	}
	c, err := engine.Select(strategy, mode, preferred, cands)
	if err != nil {
		var re *engine.RuntimeError
		if errors.As(err, &re) && re.Kind == engine.ErrRuntimeMissing && len(cfg.Failover) > 0 {
			// The chain may still serve the turn; the session fails over.
			return preferred, o.model, nil
		}
		return "", "", err
	}
	model := c.Model
	if o.model != "" {
		model = o.model
	} else if resumed.Runtime == c.Runtime && resumed.Model != "" {
		model = resumed.Model
	}
	return c.Runtime, model, nil
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }
