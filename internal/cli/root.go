package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/attach"
	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/internal/headless"
	"github.com/kaizen-code/kz/runtimes/llm"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tui"
)

// cmdRoot is kz itself: the interactive session (the TUI), or with -p one
// headless turn.
var cmdRoot = &Command{
	UsageLine: "kz [flags] | kz -p PROMPT [flags]",
	Short: []Usage{
		{"kz [flags]", "open the interactive session (TUI)"},
		{"kz -p PROMPT [flags]", "run one turn headless and print it"},
	},
	Long: `Flags for kz and kz -p:
  -p, --print PROMPT       run PROMPT as one headless turn; -p - reads the
                           prompt from standard input (for long prompts)
  --runtime NAME           runtime to use, or auto (default: config, then auto)
  --model MODEL            model of the runtime
  --image FILE             attach an image (PNG, JPEG, GIF or WebP, at most
                           5 MB) to the -p prompt; repeatable. The turn runs
                           on a runtime with the vision capability
  --reasoning R            off | low | medium | high | budget tokens (>= 1024):
                           how hard models that reason think (native and
                           completion runtimes; replaces the config's)
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
  --debug                  log at debug level; KZ_LOG=debug|info|warn|error
                           sets the level otherwise (default info). The log
                           is $XDG_STATE_HOME/kz/kz.log, never the terminal

Exit codes:
  0  the turn completed
  1  error (the turn failed, or kz could not run it)
  2  usage error (bad flags or arguments)
  3  the turn was interrupted or hit a limit (max cycles, budget, timeout),
     or kz -p's output was closed early (e.g. piped into head): the turn is
     then recorded as interrupted
`,
	Run: runRoot,
}

// runRoot runs sessions until one ends: the session picker of the TUI
// ends the program with a request to open another session, and kz then
// starts again on it.
func runRoot(ctx context.Context, inv *Invocation, args []string) error {
	return runSessionLoop(ctx, inv, args, sessionExtras{})
}

// sessionExtras are what kz itself, not a flag, asks of the next session:
// open the setup screen (kz setup), or say what the setup just wrote.
type sessionExtras struct {
	setup bool
	note  string
}

// runSessionLoop runs sessions until one ends without asking for another:
// the session picker asks for the session chosen, the setup screen for
// the session again on the runtime it configured.
func runSessionLoop(ctx context.Context, inv *Invocation, args []string, x sessionExtras) error {
	for {
		err := runSession(ctx, inv, args, x)
		x = sessionExtras{}
		var rr *tui.ResumeRequest
		var sd *tui.SetupDone
		switch {
		case errors.As(err, &rr):
			args = withResume(args, rr.SessionID)
		case errors.As(err, &sd):
			args, x.note = afterSetup(args, sd), setupNote(sd)
		default:
			return err
		}
	}
}

// afterSetup is the command line of the session after the setup: on the
// runtime it configured (replacing --runtime and --model), and on the
// same session when that one already had turns.
func afterSetup(args []string, sd *tui.SetupDone) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			out = append(out, a)
		case name == "runtime" || name == "model" || name == "resume":
			if !hasValue {
				i++
			}
		case name == "continue":
		default:
			out = append(out, a)
		}
	}
	out = append(out, "--runtime", sd.Result.Runtime)
	if sd.SessionID != "" {
		out = append(out, "--resume", sd.SessionID)
	}
	return out
}

// setupNote is the first line of the session after the setup.
func setupNote(sd *tui.SetupDone) string {
	r := sd.Result
	s := "kz is set up: runtime " + r.Runtime
	if r.Model != "" {
		s += " (" + r.Model + ")"
	}
	s += " is now the default, written to " + r.ConfigPath
	if r.KeyPath != "" {
		s += "; the key is in " + r.KeyPath + " (mode 0600)"
	}
	return s + ". Type a message to start."
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

// rootFlags are the flags of kz and kz -p.
type rootFlags struct {
	prompt, runtime, model, mode, pmode, format, resume, script, dataDir, theme, reasoning string
	cont, demo, debug                                                                      bool
	maxCycles, patchRetries                                                                int
	budget                                                                                 float64
	timeout                                                                                time.Duration
	set                                                                                    map[string]bool
	rules                                                                                  cliRules
	// images are the --image files, in order.
	images []string
}

func parseRoot(args []string) (*rootFlags, error) {
	o := &rootFlags{set: map[string]bool{}}
	fs := flag.NewFlagSet("kz", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.prompt, "p", "", "")
	fs.StringVar(&o.prompt, "print", "", "")
	fs.StringVar(&o.runtime, "runtime", "", "")
	fs.StringVar(&o.model, "model", "", "")
	fs.Var(listFlag{&o.images}, "image", "")
	fs.StringVar(&o.reasoning, "reasoning", "", "")
	fs.StringVar(&o.mode, "mode", "", "")
	fs.StringVar(&o.pmode, "permission-mode", "", "")
	fs.StringVar(&o.format, "output-format", "text", "")
	fs.StringVar(&o.resume, "resume", "", "")
	fs.StringVar(&o.script, "script", "", "")
	fs.StringVar(&o.dataDir, "data-dir", "", "")
	fs.BoolVar(&o.cont, "continue", false, "")
	fs.BoolVar(&o.demo, "demo", false, "")
	fs.BoolVar(&o.debug, "debug", false, "")
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
		if sub := fs.Arg(0); lookup(sub) != nil && !o.set["p"] && !o.set["print"] {
			// kz --data-dir D sessions list: the flags were meant for the
			// command, which dispatch only recognises first.
			flags := args[:len(args)-fs.NArg()]
			return nil, usagef("subcommands come first: kz %s", quoteArgs(append(fs.Args(), flags...)))
		}
		return nil, usagef("unexpected argument %q (quote the prompt: kz -p \"...\")", fs.Arg(0))
	}
	if err := requireValues(fs, "runtime", "model", "mode", "permission-mode", "output-format", "resume", "script", "data-dir", "theme", "reasoning"); err != nil {
		return nil, err
	}
	switch {
	case o.maxCycles < 0:
		return nil, usagef("--max-cycles cannot be negative")
	case o.reasoning != "" && reasoningError(o.reasoning) != nil:
		return nil, usagef("--reasoning: %v", reasoningError(o.reasoning))
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
	case len(o.images) > 0 && !o.set["p"] && !o.set["print"]:
		return nil, usagef("--image attaches to a -p prompt (in the TUI, mention @shot.png or paste the path)")
	case len(o.images) > engine.MaxImages:
		return nil, usagef("--image: at most %d images per message", engine.MaxImages)
	}
	return o, nil
}

// options turns the flags into what app.Open takes; the modes are
// checked here, so that a bad one is a usage error.
func (o *rootFlags) options(warn io.Writer) (app.Options, error) {
	opts := app.Options{Interactive: o.prompt == "", OneShot: o.prompt != "", DataDir: o.dataDir, Runtime: o.runtime, Model: o.model,
		Resume: o.resume, Continue: o.cont, Rules: o.rules.Rules, Script: o.script, Demo: o.demo, Warn: warn,
		Reasoning: o.reasoning}
	if len(o.images) > 0 {
		// The selector routes the turn to a runtime that can see them.
		opts.Needs = engine.NewCapSet(engine.CapVision)
	}
	var err error
	if o.mode != "" {
		if opts.Mode, err = engine.ParseMode(o.mode); err != nil {
			return opts, usagef("--mode: %v", err)
		}
	}
	if o.pmode != "" {
		if opts.PermissionMode, err = engine.ParsePermissionMode(o.pmode); err != nil {
			return opts, usagef("--permission-mode: %v", err)
		}
	}
	if o.set["max-cycles"] {
		opts.MaxCycles = &o.maxCycles
	}
	if o.set["budget-usd"] {
		opts.BudgetUSD = &o.budget
	}
	if o.set["timeout"] {
		opts.Timeout = &o.timeout
	}
	if o.set["patch-retries"] {
		opts.PatchRetries = &o.patchRetries
	}
	return opts, nil
}

// reasoningError says what is wrong with a --reasoning value.
func reasoningError(s string) error {
	_, err := llm.ParseReasoning(s)
	return err
}

// runSession opens one session and runs it: in the TUI, or one turn of
// kz -p.
func runSession(ctx context.Context, inv *Invocation, args []string, x sessionExtras) (err error) {
	o, err := parseRoot(args)
	if err != nil {
		return err
	}
	if o.prompt != "" {
		raiseGCForOneShot()
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
	defer func() {
		if err != nil && !printed && o.prompt != "" {
			err = notStarted(ctx, inv.Stdout, format, o, err)
		}
	}()
	opts, err := o.options(inv.Stderr)
	if err != nil {
		return err
	}
	if o.prompt == "-" {
		if o.prompt, err = readPrompt(ctx, stdin); err != nil {
			return err
		}
	}
	// The log goes in before anything is built: the runtimes take the
	// default logger when they are made.
	lg := installLog(o.debug, inv.Stderr)
	defer func() { _ = lg.Close() }()
	if opts.Interactive && o.demo {
		// The demo's first frame does not wait for its scratch folder
		// and database (see runPreparedTUI).
		return runPreparedTUI(ctx, inv, opts, o.theme, x, "preparing demo…")
	}
	a, err := app.Open(ctx, opts)
	if err != nil {
		return err
	}
	if opts.Interactive && !o.demo {
		if a, err = askTrust(ctx, a, opts); err != nil {
			return err
		}
	}
	defer a.Close()
	defer watchTurnsGC(a.Session)()
	if opts.Interactive {
		return runTUI(ctx, inv, a, o.theme, !o.demo, x)
	}
	msg := engine.UserMessage{Text: o.prompt}
	for _, f := range o.images {
		im, err := attach.Image(a.Env.Workspace, f)
		if err != nil {
			return &app.NotStartedError{SessionID: a.Session.ID(), Runtime: a.Session.State().Runtime, Model: a.Session.State().Model,
				Err: &engine.RuntimeError{Kind: engine.ErrInvalidArgument, Message: "--image: " + err.Error(), Err: err}}
		}
		msg.Images = append(msg.Images, im)
	}
	printed = true
	return runHeadless(ctx, inv, a, msg, format)
}

// notStarted prints the final_result of a turn of kz -p that could not
// start, and returns the error kz exits with.
func notStarted(ctx context.Context, stdout io.Writer, format headless.Format, o *rootFlags, err error) error {
	var ue usageError
	var aue *app.UsageError
	var ee exitError
	if errors.As(err, &ue) || errors.As(err, &aue) || errors.As(err, &ee) {
		return err
	}
	session, runtime, model := "", o.runtime, o.model
	var ns *app.NotStartedError
	if errors.As(err, &ns) {
		session, runtime, model = ns.SessionID, ns.Runtime, ns.Model
	}
	ev := headless.NotStarted(session, runtime, model, err)
	if ie := interrupted(ctx, err); ie != nil {
		err = ie
		ev.Status, ev.Text, ev.ErrorKind = string(engine.StatusInterrupted), ie.Error(), ""
	}
	if werr := headless.WriteNotStarted(stdout, format, ev); werr != nil {
		err = errors.Join(err, werr)
	}
	return err
}

// runTUI runs the interactive session until the person quits. After a
// normal quit of a session that can be resumed (not the demo's, whose
// store goes with it), it says how to come back to it.
func runTUI(ctx context.Context, inv *Invocation, a *app.App, theme string, resumable bool, x sessionExtras) error {
	err := tui.Run(ctx, tuiOptions(a, theme, x, inv.Stderr))
	return afterTUI(ctx, inv, a, resumable, err)
}

// tuiOptions are the TUI's options for the session of a: the app's
// services, the theme, the custom commands and what the session loop asks
// (x). A custom command that cannot be read is a warning on warn.
func tuiOptions(a *app.App, theme string, x sessionExtras, warn io.Writer) tui.Options {
	opts := a.TUI()
	if x.setup && opts.Setup != nil {
		opts.OpenSetup = true
	}
	if x.note != "" {
		// The note replaces the first-run text: that is what it answers.
		opts.Welcome = x.note
	}
	opts.Theme = firstNonEmpty(theme, a.Env.Config.Theme)
	commands, cerr := tui.LoadCommands(a.CommandDirs()...)
	if cerr != nil {
		_, _ = fmt.Fprintf(warn, "kz: warning: custom commands: %v\n", cerr)
	}
	opts.Commands = commands
	return opts
}

// afterTUI closes the session of a once the TUI has returned err, and
// turns what the TUI asked for on the way out (the setup's result) into
// the session loop's request; after a normal quit of a resumable session
// it prints the resume hint.
func afterTUI(ctx context.Context, inv *Invocation, a *app.App, resumable bool, err error) error {
	if cerr := a.CloseSession(ctx); err == nil {
		err = cerr
	}
	var sd *tui.SetupDone
	if errors.As(err, &sd) {
		// The session opens again on the new runtime; one that already
		// had turns is continued.
		sd.SessionID = ""
		if si, serr := a.Store.Session(context.WithoutCancel(ctx), a.Session.ID()); serr == nil && si.Turns > 0 {
			sd.SessionID = si.ID
		}
		return sd
	}
	if err == nil && resumable {
		printResumeHint(ctx, inv.Stdout, a)
	}
	return err
}

// printResumeHint prints `resume with: kz --resume ID` once the TUI has
// given the terminal back (tui.Run has returned, so the hint lands on the
// normal screen, below what was there before kz) and the session is
// closed (its journal flushed, so the store has every turn). A session
// with no stored turn has nothing to resume, and a store that cannot
// answer gets no hint rather than a wrong one.
func printResumeHint(ctx context.Context, stdout io.Writer, a *app.App) {
	if a.Store == nil || a.Session == nil {
		return
	}
	si, err := a.Store.Session(context.WithoutCancel(ctx), a.Session.ID())
	if err != nil || si.Turns == 0 {
		return
	}
	_, _ = fmt.Fprintf(stdout, "resume with: kz --resume %s\n", si.ID)
}

// runHeadless runs one turn of kz -p and maps its outcome to kz's exit
// code.
func runHeadless(ctx context.Context, inv *Invocation, a *app.App, msg engine.UserMessage, format headless.Format) error {
	final, runErr := headless.RunMessage(ctx, a.Session, msg, format, inv.Stdout, inv.Stderr)
	cerr := a.CloseSession(ctx)
	if errors.Is(context.Cause(ctx), errOutputClosed) && final.Type != "" {
		// Whoever read the output stopped reading (kz -p … | head): the
		// turn was interrupted and recorded so, or had already ended.
		// The failed writes are not an error of their own.
		if final.Status != string(engine.StatusComplete) {
			_, _ = fmt.Fprintf(inv.Stderr, "kz: the output was closed, so the turn was interrupted; it is recorded in session %s\n", a.Session.ID())
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
		_, _ = fmt.Fprintf(inv.Stderr, "kz: session %s\n", a.Session.ID())
	}
	if code := headless.ExitCode(engine.Status(final.Status)); code != 0 {
		return exitError{code}
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
