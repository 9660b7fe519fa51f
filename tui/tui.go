// Package tui is kz's interactive terminal interface, a Bubble Tea v2
// program over one engine session: a streaming transcript with tool cards,
// the permission dialog, runtime, model and mode switching, a status bar
// and a help overlay.
//
// Requests that carry a diff (a patch proposal, a file edit) open the diff
// review instead of the plain dialog: a file list with stats, unified or
// side-by-side views rendered lazily with syntax highlighting and
// intra-line emphasis, hunk navigation and per-file acceptance (review.go,
// diffview.go). Slash commands with completion (commands.go), the session
// picker (sessions.go), `@` file mentions (mentions.go) and the log of
// applied changes (changes.go) take their services from Options through
// small interfaces (extend.go).
//
// The package never runs tools or parses runtime protocols: every action
// goes through the Session interface, from a tea.Cmd, and every change on
// screen comes from the session's events.
package tui

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// Options configure Run.
type Options struct {
	// Session is the conversation to drive; it must have been created with
	// Interactive: true so that permission requests reach the person.
	// *engine.Session implements it. Run does not close it.
	Session Session
	// Events delivers the session's events. When nil, Run subscribes to
	// Session (which must then have Subscribe() *engine.Subscription) and
	// closes the subscription when it returns.
	Events EventSource
	// Theme is dark (default), light or high-contrast.
	Theme string
	// NoColor drops all colour; Run also honours the NO_COLOR variable.
	NoColor bool
	// Welcome is shown at the top of the transcript, e.g. FirstRunText
	// when no runtime is available, or how to use the demo.
	Welcome string
	// Input and Output default to the terminal (tests pass pipes).
	Input  io.Reader
	Output io.Writer
	// Width and Height fix the initial size (tests without a terminal).
	Width, Height int

	// Notify is how a question announces itself while the terminal's
	// window is not focused (the [tui] notify key); empty is auto.
	Notify NotifyMode

	// HunkSelection lets the person reject single hunks of a proposal in
	// the review (engine.FileSelection.Hunks, which every PreparedPatch
	// applies). Without it the review accepts and rejects whole files
	// only.
	HunkSelection bool
	// Undo undoes the last applied change (/undo); nil disables it.
	Undo Undoer
	// Sessions lists and deletes stored sessions for the session picker
	// (/sessions); *store.Store implements it. nil disables the picker.
	Sessions SessionStore
	// Workspace is the session's directory: the picker's "this directory"
	// filter, the root of /export and of `@` mentions.
	Workspace string
	// Files lists the workspace for `@` mentions; nil walks Workspace
	// with simple .gitignore support.
	Files FileLister
	// Commands are custom slash commands (LoadCommands reads them from the
	// user's directory and, only when the folder is trusted, the
	// project's .kz/commands).
	Commands []CustomCommand
	// Grants lists and revokes the session's and the persisted permission
	// grants (/permissions); nil shows only the modes.
	Grants GrantManager
	// History holds the stored events of a reopened session, which Run
	// shows as they were shown live; *store.Store implements it. nil
	// shows no history.
	History History
	// Mentions reads `@` mentioned files into the prompt through the
	// read_file gate; nil leaves mentions as plain paths.
	Mentions MentionReader
	// Memory lists the project memory files (/memory) and keeps the "#"
	// lines; nil disables both.
	Memory MemoryBook
	// Reasoning changes the models' reasoning (/reasoning); nil disables
	// it. ReasoningLevel is the level it starts at, for the cycle.
	Reasoning      ReasoningSetter
	ReasoningLevel string
	// Setup backs the setup screen (/setup); nil disables it. OpenSetup
	// opens it at once: no runtime is available, or kz setup.
	Setup     SetupService
	OpenSetup bool
	// MCP lists the MCP servers (/mcp); nil when none is configured.
	MCP MCPLister

	// Prepare, when set, builds the session after the first frame: Run
	// then ignores every field above but the theme, input, output and
	// size, and takes them from what Prepare returns. Preparing is the
	// status bar's text meanwhile, e.g. "preparing demo…".
	Prepare   PrepareFunc
	Preparing string
}

// subscriber is implemented by *engine.Session.
type subscriber interface {
	Subscribe() *engine.Subscription
}

// Run runs the TUI until the person quits or ctx ends. It returns nil on
// a normal quit.
func Run(ctx context.Context, opts Options) error {
	if opts.Session == nil && opts.Prepare == nil {
		return errors.New("tui: a session is required")
	}
	theme, err := themes.Resolve(opts.Theme, opts.NoColor || os.Getenv("NO_COLOR") != "")
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var m *Model
	if opts.Prepare != nil {
		// The first frame shows the screen without a session; the
		// session is attached when Prepare, started below once that
		// frame is drawn, has built it.
		m = newPreparingModel(ctx, theme, opts.Preparing)
	} else {
		m = newModel(ctx, opts.Session, nil, theme, "")
		if err := m.attach(ctx, opts); err != nil {
			return err
		}
		if opts.OpenSetup && opts.Setup != nil {
			// Init starts the setup screen's first check (the agent CLIs).
			m.initCmd = m.openSetup()
		}
	}
	// The running program gives memory back when it comes to rest
	// (rest.go); models built by tests do not, unless they ask.
	m.trimAtRest = true
	// Run's own goroutine runs Update, so once the program has ended
	// nothing else reads or sets unsubscribe.
	defer func() {
		if m.unsubscribe != nil {
			m.unsubscribe()
		}
	}()
	// kz's Bubble Tea (third_party/bubbletea) writes a frame when the
	// view changes: at once when the last frame is at least 1/120 s old,
	// otherwise when it is. So a key's echo does not wait for a tick, an
	// idle kz is not woken at all, and no more than 120 frames a second
	// are written; streamed text is paced by kz itself (pacing.go).
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(120)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	// The colour profile is known before the first frame without asking
	// tmux (see quickProfile); when tmux might offer more, it is asked in
	// the background and the program's colours are upgraded.
	var out io.Writer = os.Stdout
	if opts.Output != nil {
		out = opts.Output
	}
	env := os.Environ()
	profile, askTmux := quickProfile(out, env)
	popts = append(popts, tea.WithColorProfile(profile))
	prog := tea.NewProgram(m, popts...)
	var wg sync.WaitGroup
	detectCtx, stopDetect := context.WithCancel(ctx)
	if askTmux {
		// The `tmux info` subprocess starts only once the first frame is
		// drawn: on two cores, starting it earlier takes CPU from the
		// first frame.
		wg.Go(func() {
			select {
			case <-m.drawn:
			case <-detectCtx.Done():
				return
			}
			if full := colorprofile.Detect(out, env); full > profile {
				prog.Send(tea.ColorProfileMsg{Profile: full})
			}
		})
	}
	// Syntax highlighting reads chroma's lexers on first use (about 15
	// ms, see third_party/README.md); reading them once the first
	// frame is up keeps that pause out of the first code block and diff.
	wg.Go(func() {
		select {
		case <-m.drawn:
			warmHighlighting()
		case <-detectCtx.Done():
		}
	})
	if opts.Prepare != nil {
		// Set-up starts once the first frame is drawn, for the same
		// reason as the tmux query: on two cores it would take CPU from
		// that frame. Run waits for it (wg), so whatever Prepare built is
		// its caller's to release once Run returns, attached or not.
		wg.Go(func() {
			select {
			case <-m.drawn:
			case <-detectCtx.Done():
				return
			}
			o, err := opts.Prepare(detectCtx)
			prog.Send(attachMsg{opts: o, err: err})
		})
	}
	_, err = prog.Run()
	stopDetect()
	wg.Wait()
	if err == nil && m.resumeID != "" {
		return &ResumeRequest{SessionID: m.resumeID}
	}
	if err == nil && m.setupDone != nil {
		return m.setupDone
	}
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		// Cancelled from outside (a signal): a normal way to stop.
		return nil
	}
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return m.prepareErr()
}

// DemoScript is the scripted runtime script of `kz --demo`: each prompt
// plays the next segment (streamed markdown with reasoning; a shell command
// that asks permission; a file edit that asks with its diff; a slow answer
// to interrupt), so a newcomer can try every key without a model.
//
//go:embed demo.jsonl
var DemoScript string

// DemoLiteScript is the demo's second runtime: text only, so switching to
// it shows how a runtime that cannot serve a mode is refused.
//
//go:embed demo_lite.jsonl
var DemoLiteScript string

// Names of the demo runtimes.
const (
	DemoRuntime     = "demo"
	DemoLiteRuntime = "demo-lite"
)

// NewDemoWorkspace makes the scratch folder `kz --demo` works in, under
// the system's temporary directory, so that what the demo writes (an
// applied patch, its undo) never touches the person's project. It holds
// the main.go the demo's edit scene talks about. remove deletes the folder.
func NewDemoWorkspace() (dir string, remove func() error, err error) {
	dir, err = os.MkdirTemp("", "kz-demo-")
	if err != nil {
		return "", nil, fmt.Errorf("demo workspace: %w", err)
	}
	remove = func() error { return os.RemoveAll(dir) }
	// The workspace is compared with resolved paths (os.Root, the store's
	// per-folder sessions), so a symlinked TMPDIR is resolved here.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		_ = remove()
		return "", nil, fmt.Errorf("demo workspace: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(demoMainGo), 0o644); err != nil {
		_ = remove()
		return "", nil, fmt.Errorf("demo workspace: %w", err)
	}
	return dir, remove, nil
}

const demoMainGo = `package main

import "fmt"

func main() {
	fmt.Println("helo")
}
`

// DemoWelcome is the text `kz --demo` shows first.
const DemoWelcome = `Welcome to the kz demo. Nothing here talks to a model: a scripted runtime answers.
Type any prompt and press enter; each prompt plays the next scene: a streamed answer, a shell command that asks permission (y allow · s session · a always · n deny · m deny with message), a file edit with its diff, a patch proposal (in patch-proposal mode it opens the diff review), and a slow answer to interrupt with esc (twice: at once). Type / for commands.
shift+tab cycles the mode, ctrl+r switches runtime (demo-lite is text only), ctrl+l the model, ? shows every key.`
