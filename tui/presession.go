package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// PrepareFunc builds the session the TUI drives, with every service of
// Options that depends on it. Run calls it once, after the first frame is
// on the screen, so that slow set-up (a scratch folder, creating and
// migrating a database) does not delay that frame. ctx ends when the TUI
// ends; Run does not return before PrepareFunc has.
type PrepareFunc func(ctx context.Context) (Options, error)

// preparing is the state of a model that has no session yet
// (Options.Prepare): the screen is drawn and takes input, messages typed
// meanwhile queue, and the status bar says what is being prepared.
type preparing struct {
	// what is the status bar's text, e.g. "preparing demo…".
	what string
	// err is why the set-up failed; the model then stays without a
	// session, and Run returns it when the person quits.
	err error
}

// errNotReady is what the stand-in session answers to every call made
// before the real session is attached.
var errNotReady = errors.New("the session is still being prepared")

// unreadySession stands in for the session until it is attached: every
// call is refused with errNotReady, so a key or command pressed meanwhile
// gets a clear answer instead of a nil dereference.
type unreadySession struct{}

func (unreadySession) Submit(string) error                  { return errNotReady }
func (unreadySession) Answer(string, engine.Answer) error   { return errNotReady }
func (unreadySession) InterruptTurn(int64, bool)            {}
func (unreadySession) SetMode(engine.Mode) error            { return errNotReady }
func (unreadySession) SwitchRuntime(string, string) error   { return errNotReady }
func (unreadySession) State() engine.State                  { return engine.State{} }
func (unreadySession) Runtimes() []engine.RuntimeInfo       { return nil }
func (unreadySession) Transcript() []engine.TranscriptEntry { return nil }

// attachMsg delivers what PrepareFunc built.
type attachMsg struct {
	opts Options
	err  error
}

// newPreparingModel is the model of the first frame when the session is
// not there yet. status is the status bar's text; empty, "preparing the
// session…".
func newPreparingModel(ctx context.Context, theme themes.Theme, status string) *Model {
	if status == "" {
		status = "preparing the session…"
	}
	m := newModel(ctx, unreadySession{}, nil, theme, "")
	m.pre = &preparing{what: status}
	m.status.preparing = status
	return m
}

// attach connects the model to its session and the services that come
// with it: the events (subscribed here unless opts.Events is given), the
// stored history of a reopened session, the welcome text, the custom
// commands and the extensions. Run calls it before the program starts,
// or onAttach once PrepareFunc is done.
func (m *Model) attach(ctx context.Context, opts Options) error {
	if opts.Session == nil {
		return errors.New("tui: a session is required")
	}
	events := opts.Events
	if events == nil {
		s, ok := opts.Session.(subscriber)
		if !ok {
			return errors.New("tui: Options.Events is required for a session that cannot be subscribed to")
		}
		sub := s.Subscribe()
		m.unsubscribe = sub.Close
		events = sub
	}
	m.sess, m.events = opts.Session, events
	st := m.sess.State()
	m.status.state, m.status.running, m.modeCursor = st, st.Running, st.Mode
	m.status.total, m.status.totalCost = st.TotalUsage, st.TotalCostUSD
	m.hunkSelect = opts.HunkSelection
	m.notify = opts.Notify
	if m.notify == "" {
		m.notify = NotifyAuto
	}
	m.tr.workspace = opts.Workspace
	if err := m.replay(ctx, opts.History); err != nil {
		m.tr.notice("could not show the whole history: "+err.Error(), "warn")
	}
	if opts.Welcome != "" {
		m.tr.notice(opts.Welcome, "")
	}
	for _, c := range opts.Commands {
		m.custom = append(m.custom, c.asSlash())
	}
	m.ext = extensions{undo: opts.Undo, sessions: opts.Sessions, files: opts.Files, workspace: opts.Workspace, grants: opts.Grants,
		mentions: opts.Mentions, memory: opts.Memory, reasoning: opts.Reasoning, setup: opts.Setup, mcp: opts.MCP}
	m.reasoning = opts.ReasoningLevel
	return nil
}

// onAttach takes the prepared session: it starts listening to its events,
// opens the setup screen when asked, and sends the first message queued
// while the session was prepared (the others follow turn by turn, as any
// queue does). A failed set-up is shown as an error; the model then stays
// without a session and what was typed stays queued on screen.
func (m *Model) onAttach(msg attachMsg) tea.Cmd {
	if m.pre == nil || m.pre.err != nil {
		// Attached already, or failed: PrepareFunc runs once.
		return nil
	}
	err := msg.err
	if err == nil {
		err = m.attach(m.ctx, msg.opts)
	}
	if err != nil {
		m.pre.err = err
		m.status.preparing = "not ready: the session could not be prepared"
		m.tr.add(&item{kind: kindError, text: "could not prepare the session: " + err.Error() + " (ctrl+c quits)"})
		m.tr.toBottom()
		return nil
	}
	m.pre, m.status.preparing = nil, ""
	m.tr.toBottom()
	cmds := []tea.Cmd{m.waitEvents(), m.rest()}
	if msg.opts.OpenSetup && msg.opts.Setup != nil {
		cmds = append(cmds, m.openSetup())
	}
	if len(m.queue) > 0 {
		cmds = append(cmds, m.sendQueued())
	}
	return tea.Batch(cmds...)
}

// prepareErr is the set-up's failure, which Run returns once the person
// quits; nil when the session was attached or never prepared.
func (m *Model) prepareErr() error {
	if m.pre == nil || m.pre.err == nil {
		return nil
	}
	return fmt.Errorf("could not prepare the session: %w", m.pre.err)
}

// preparingView is the status bar while the session is prepared: only
// what is being done, since there is no runtime, mode or usage to show.
func (s *statusBar) preparingView(t *themes.Theme, width int) string {
	line := t.Status.Render(" ") + t.StatusKey.Render(s.preparing)
	if s.notice != "" {
		line += t.Status.Render(" │ ") + t.StatusKey.Render(s.notice)
	}
	w := ansi.StringWidth(line)
	if w > width {
		return ansi.Truncate(line, width, "…")
	}
	return line + t.Status.Render(strings.Repeat(" ", width-w))
}
