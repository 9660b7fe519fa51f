package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// Session is what the TUI needs from an engine session. *engine.Session
// implements it; tests use either a real session or a fake.
type Session interface {
	Submit(prompt string) error
	Answer(requestID string, a engine.Answer) error
	// InterruptTurn stops turn id, and nothing if another turn runs by
	// then (see engine.Session.InterruptTurn).
	InterruptTurn(id int64, immediate bool)
	SetMode(m engine.Mode) error
	SwitchRuntime(name, model string) error
	State() engine.State
	Runtimes() []engine.RuntimeInfo
	Transcript() []engine.TranscriptEntry
}

// EventSource delivers a session's events in batches;
// *engine.Subscription implements it.
type EventSource interface {
	NextBatch(ctx context.Context) ([]engine.Event, error)
}

// Messages. Engine calls run in Cmds and report back with these, so Update
// itself never blocks.
type (
	eventsMsg struct {
		events []engine.Event
		state  engine.State
	}
	eventsClosedMsg struct{ err error }
	stateMsg        struct{ state engine.State }
	submitMsg       struct {
		prompt string
		// images are the attachments sent with the prompt, given back
		// to the input when the session refuses the message.
		images []engine.Image
		err    error
	}
	answerMsg struct {
		requestID string
		err       error
	}
	modeMsg struct {
		mode engine.Mode
		err  error
	}
	switchMsg struct {
		kind pickerKind
		err  error
	}
	runtimesMsg struct {
		kind  pickerKind
		infos []engine.RuntimeInfo
		state engine.State
	}
	frameMsg       struct{}
	prerenderedMsg struct{ p prerendered }
)

// Model is the root Bubble Tea model. It owns the components and routes
// keys to the one in front: help, a picker, the permission dialog, or the
// input and transcript.
type Model struct {
	ctx    context.Context
	sess   Session
	events EventSource
	theme  themes.Theme
	now    func() time.Time

	keys   keyMap
	help   help.Model
	input  textarea.Model
	spin   spinner.Model
	tr     *transcript
	md     *mdRenderer
	status statusBar
	// reasoning is the level /reasoning last set, where its cycle goes on.
	reasoning string
	dialog    *permissionDialog
	picker    *picker
	// review is the diff review of the dialog's head request, when that
	// request carries a diff (see reviewable); it is rebuilt whenever the
	// head changes, so it always answers the request on screen.
	review *review
	// proposals are the patch_proposed events waiting for their
	// apply_patch request, by patch id.
	proposals  map[string]engine.Event
	hunkSelect bool
	ext        extensions
	// drawn is closed by the first View, that is when the first frame is
	// about to be written; Run waits for it to start background work.
	drawn     chan struct{}
	drawnOnce sync.Once
	// resumeID is the session the person chose to open; Run returns it.
	resumeID string
	// setup is the setup screen, when open (setup.go); setupDone is what
	// it wrote, which Run returns.
	setup     *setupDialog
	setupDone *SetupDone
	// initCmd is run by Init with the first wait for events.
	initCmd tea.Cmd
	// pre is set while the session is being prepared (presession.go);
	// unsubscribe closes the event subscription attach made, if any.
	pre         *preparing
	unsubscribe func()
	// sessions is the session picker, when open.
	sessions *sessionPicker
	// completing is the "/prefix" typed before tab completion replaced it;
	// completeIdx the completion shown.
	completing  string
	completeIdx int
	// menuCursor is the highlighted command of the "/" menu; menuMoved
	// says the person moved it, so enter takes it.
	menuCursor int
	menuMoved  bool
	// restGen numbers the rests (rest.go); only the last one trims.
	// trimAtRest turns the trim on: Run sets it.
	restGen    uint64
	trimAtRest bool
	mention    mentions
	// changes is the log of changes applied in this session; changeLog
	// its viewer, when open.
	changes   []appliedChange
	changeLog *changeLog
	// rewind is the open /rewind dialog.
	rewind *rewindDialog
	// custom are the custom commands (Options.Commands).
	custom []slashCommand

	width, height int
	showHelp      bool
	// quiet turns off timers (spinner, frame ticks, cursor blink) so tests
	// can run every Cmd synchronously.
	quiet    bool
	spinning bool
	frameDue bool
	// prerendering is set while a message above the view is being rendered
	// on another goroutine (one at a time).
	prerendering bool
	// bg renders messages ahead of the view on another goroutine (see
	// prerender.go).
	bg *bgRenderer
	// scrolled marks an update that moved the transcript, whose next frame
	// may show plain stand-ins to replace.
	scrolled   bool
	submitting bool
	// replaying is set while a stored session's events are folded in
	// (see replay).
	replaying bool
	// interrupts counts the esc presses of the running turn, and
	// lastInterrupt is when the last one came (see interrupt).
	interrupts    int
	lastInterrupt time.Time
	// notify is how a question that waits is announced while the
	// terminal's window is not focused (focused, as the terminal reports
	// it; true until it says otherwise). getenv reads the terminal's
	// environment for the auto choice.
	notify  NotifyMode
	focused bool
	getenv  func(string) string

	modeCursor engine.Mode

	// Memoized parts of the frame: they change far less often than the
	// transcript, and rendering them costs more than comparing a key.
	inputMemo, statusMemo, hintMemo memo
	// pace keeps the last frame while only streamed text arrives.
	pace framePacer

	history []string
	histPos int // len(history) when not browsing
	draft   string
	queue   []queued
	// attached are the images attached to the message being written
	// (pasted paths), shown as chips above the input.
	attached []engine.Image

	// lastKeyAt is when the last key press that counts as typing came
	// (every key but a prompt's navKey keys); a prompt takes answer keys
	// only after a pause since then (see promptkeys.go).
	lastKeyAt time.Time
	// quitAskedAt is when a first quit key asked for a second one; zero
	// when no such wait is on (see quit.go).
	quitAskedAt time.Time
}

// newModel builds the root model. events may be nil (tests feed eventsMsg
// directly).
func newModel(ctx context.Context, sess Session, events EventSource, theme themes.Theme, welcome string) *Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "› "
	ta.Placeholder = "Ask kz…  (enter send · ctrl+j newline · ? help)"
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	ta.KeyMap.TransposeCharacterBackward.SetEnabled(false)
	// The input grows with its wrapped rows, not its logical lines, up to
	// inputMaxRows; the textarea then also keeps its scroll offset within
	// the content when it grows, so every row shows while they fit.
	// MaxContentHeight bounds the content by visual rows: without it the
	// textarea would refuse a newline past MaxHeight logical lines.
	ta.DynamicHeight = true
	ta.MinHeight, ta.MaxHeight = 1, inputMaxRows
	ta.MaxContentHeight = 10000
	ta.SetHeight(1)
	// A steady cursor: blinking would repaint the screen twice a second
	// for nothing.
	tst := ta.Styles()
	tst.Cursor.Blink = false
	tst.Focused.Prompt = theme.Prompt
	tst.Focused.Placeholder = theme.Muted
	tst.Focused.CursorLine = theme.Text
	tst.Focused.Text = theme.Text
	ta.SetStyles(tst)
	ta.Focus()
	h := help.New()
	h.Styles.ShortKey, h.Styles.ShortDesc = theme.HelpKey, theme.HelpDesc
	h.Styles.FullKey, h.Styles.FullDesc = theme.HelpKey, theme.HelpDesc
	m := &Model{
		ctx: ctx, sess: sess, events: events, theme: theme, now: time.Now, focused: true, getenv: os.Getenv,
		keys: defaultKeys(), help: h, input: ta,
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(theme.Accent)),
		tr:   newTranscript(), md: newMDRenderer(theme.Markdown), bg: newBGRenderer(theme.Markdown),
		width: 80, height: 24, drawn: make(chan struct{}),
	}
	m.dialog = newPermissionDialog(&m.theme)
	st := sess.State()
	m.status.state, m.status.running, m.modeCursor = st, st.Running, st.Mode
	// A resumed session starts from its stored totals; its events are
	// replayed by Run (see replay).
	m.status.total, m.status.totalCost = st.TotalUsage, st.TotalCostUSD
	if welcome != "" {
		m.tr.notice(welcome, "")
	}
	return m
}

// Init starts listening for events.
func (m *Model) Init() tea.Cmd {
	if m.pre == nil {
		// The session is there from the start: the TUI is at rest once
		// its first frames are out.
		return tea.Batch(m.waitEvents(), m.initCmd, m.rest())
	}
	return tea.Batch(m.waitEvents(), m.initCmd)
}

// waitEvents returns a Cmd that waits for the next events. Streamed text
// that arrives while the frame on screen may not yet be replaced is
// gathered until the next frame is due (see framePacer.gatherUntil): one
// message then carries what would otherwise be dozens, each handled,
// viewed and scheduled for nothing.
//
// The deadline is fixed when the Cmd is made, not when the first text
// comes: text that comes after the next frame was due (the first of a
// reply, or any after a pause) is handed on at once, and text that comes
// within an interval waits only for the rest of it. Counted from its
// arrival instead, every first piece waited a whole frame interval (50
// ms) however long nothing had been drawn.
func (m *Model) waitEvents() tea.Cmd {
	if m.events == nil {
		return nil
	}
	ctx, src, sess := m.ctx, m.events, m.sess
	var deadline time.Time
	if !m.quiet {
		// On the real clock: the model's may be a test's.
		now := m.now()
		deadline = time.Now().Add(m.pace.gatherUntil(now).Sub(now))
	}
	return func() tea.Msg {
		evs, err := src.NextBatch(ctx)
		if err != nil {
			return eventsClosedMsg{err}
		}
		if !deadline.IsZero() {
			evs = gatherDeltas(ctx, src, evs, deadline)
		}
		return eventsMsg{events: evs, state: sess.State()}
	}
}

// Update routes a message; it returns Cmds for anything that touches the
// session.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	m.pace.note(msg, m.quiet)
	m.bg.noteInput(msg)
	switch msg := msg.(type) {
	case tea.FocusMsg:
		m.focused = true
	case tea.BlurMsg:
		m.focused = false
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		m.input.SetWidth(m.width)
		if m.setup != nil {
			m.setup.resize(m.width)
		}
	case tea.KeyPressMsg:
		if m.setup != nil {
			cmds = append(cmds, m.onSetup(m.setup.update(msg)))
			break
		}
		cmds = append(cmds, m.onKey(msg))
	case tea.PasteMsg:
		if m.setup != nil {
			cmds = append(cmds, m.setup.paste(msg))
			break
		}
		cmds = append(cmds, m.onPaste(msg))
	case setupEvent:
		if m.setup != nil {
			cmds = append(cmds, m.onSetup(msg.apply(m.setup)))
		}
	case tea.MouseWheelMsg:
		m.scrolled = true
		// The wheel scrolls what is in front: a diff, else the transcript.
		if dv, h := m.frontDiff(); dv != nil {
			switch msg.Button {
			case tea.MouseWheelUp:
				dv.scroll(-3, h)
			case tea.MouseWheelDown:
				dv.scroll(3, h)
			}
			break
		}
		switch msg.Button {
		case tea.MouseWheelUp:
			m.tr.scroll(m.renderCtx(), m.transcriptHeight(), -3)
		case tea.MouseWheelDown:
			m.tr.scroll(m.renderCtx(), m.transcriptHeight(), 3)
		}
	case eventsMsg:
		cmds = append(cmds, m.onEvents(msg), m.waitEvents())
	case attachMsg:
		cmds = append(cmds, m.onAttach(msg))
	case eventsClosedMsg:
		// The session closed (or kz is quitting): nothing more will come.
	case stateMsg:
		m.status.state = msg.state
	case submitMsg:
		m.submitting = false
		if msg.err != nil {
			if errors.Is(msg.err, engine.ErrBusy) {
				m.queue = append([]queued{{text: msg.prompt, images: msg.images}}, m.queue...)
			} else {
				m.tr.add(&item{kind: kindError, text: "could not send: " + msg.err.Error()})
				m.restoreUnsent(msg.prompt)
				m.restoreAttached(msg.images)
			}
		}
	case commandMsg:
		if msg.undone {
			m.onUndone(msg)
		}
		if msg.compacted {
			cmds = append(cmds, m.afterCompact())
		}
		m.tr.notice(msg.text, msg.style)
		m.tr.toBottom()
	case rewindPointsMsg:
		m.onRewindPoints(msg)
	case filesMsg:
		m.onFiles(msg)
	case attachedMsg:
		m.onAttached(msg)
	case sessionsMsg:
		m.onSessions(msg)
	case editorDoneMsg:
		if m.review != nil {
			m.review.onEdited(msg, &m.theme)
		} else {
			msg.discard()
		}
	case sessionDeletedMsg:
		m.onSessionDeleted(msg)
	case sessionRenamedMsg:
		m.onSessionRenamed(msg)
	case answerMsg:
		if msg.err != nil {
			m.tr.notice("answer not delivered: "+msg.err.Error(), "warn")
		}
	case modeMsg:
		if msg.err != nil {
			// Refused: remember the refused mode so the next shift+tab
			// moves past it instead of asking again.
			m.modeCursor = msg.mode
			m.tr.notice("mode "+string(msg.mode)+" refused: "+msg.err.Error(), "warn")
			m.tr.toBottom()
		}
		cmds = append(cmds, m.refreshState())
	case runtimesMsg:
		old := m.picker
		if msg.kind == pickModel {
			m.picker = newModelPicker(msg.infos, msg.state)
		} else {
			m.picker = newRuntimePicker(msg.infos, msg.state)
		}
		// A new list of an open picker keeps what was typed in it.
		m.picker.adopt(old)
	case switchMsg:
		if msg.err != nil {
			if m.picker != nil {
				m.picker.err = msg.err.Error()
			} else {
				m.tr.notice(msg.err.Error(), "warn")
			}
		} else {
			m.picker = nil
		}
		cmds = append(cmds, m.refreshState())
	case spinner.TickMsg:
		if m.status.running {
			var cmd tea.Cmd
			m.spin, cmd = m.spin.Update(msg)
			cmds = append(cmds, cmd)
		} else {
			m.spinning = false
		}
	case frameMsg:
		m.frameDue = false
	case quitExpiredMsg:
		m.onQuitExpired(msg)
	case restMsg:
		cmds = append(cmds, m.onRest(msg))
	case prerenderedMsg:
		m.prerendering = false
		if msg.p.width == m.width {
			msg.p.doc.install(msg.p)
		}
	default:
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		cmds = append(cmds, cmd)
	}
	cmds = append(cmds, m.afterUpdate())
	return m, tea.Batch(cmds...)
}

// afterUpdate starts the spinner while a turn runs and schedules a frame
// while a streaming message lags its source.
func (m *Model) afterUpdate() tea.Cmd {
	var cmds []tea.Cmd
	m.syncReview()
	m.dialog.touch(m.now())
	if m.quiet {
		return m.sizeInput()
	}
	if m.status.running && !m.spinning {
		m.spinning = true
		cmds = append(cmds, m.spin.Tick)
	}
	m.tr.evictFar(m.height)
	if !m.prerendering {
		// The terminal height bounds the transcript's: near enough to
		// decide what to render ahead, without laying out the panel below.
		if job := m.tr.nextPrerender(m.bg, m.width, m.height); job != nil {
			m.prerendering = true
			cmds = append(cmds, func() tea.Msg { return prerenderedMsg{job()} })
		}
	}
	// A frame follows every scroll and every background render, so plain
	// stand-ins on screen are replaced as soon as their render is ready.
	if !m.frameDue && (m.tr.streaming() || m.tr.coldNear(m.width, m.height) || m.scrolled) {
		m.scrolled = false
		m.frameDue = true
		// Not before the kept frame goes stale: a tick that finds it
		// fresh draws nothing and only wakes the program again.
		wait := max(frameInterval, m.pace.untilFresh(m.now()))
		cmds = append(cmds, tea.Tick(wait, func(time.Time) tea.Msg { return frameMsg{} }))
	}
	if wait, ok := m.pace.catchUp(m.now()); ok && !m.frameDue {
		m.frameDue = true
		cmds = append(cmds, tea.Tick(wait, func(time.Time) tea.Msg { return frameMsg{} }))
	}
	m.sizeInput()
	return tea.Batch(cmds...)
}

// inputMaxRows is the input's greatest height; longer text scrolls.
const inputMaxRows = 6

// sizeInput keeps the status bar's queue count current. The input sizes
// itself to its wrapped rows (textarea.DynamicHeight, set in newModel).
func (m *Model) sizeInput() tea.Cmd {
	m.status.queued = len(m.queue)
	return nil
}

// frontDiff is the diff view on screen, if any, and its height.
func (m *Model) frontDiff() (*diffView, int) {
	switch {
	case m.review != nil:
		return m.review.dv, max(m.review.bodyH, 1)
	case m.changeLog != nil && !m.dialog.active():
		return m.changeLog.dv, max(m.changeLog.bodyH, 3)
	}
	return nil, 0
}

// syncReview opens the review for the dialog's head request when it
// carries a diff, and closes it when that request is gone.
func (m *Model) syncReview() {
	if !m.dialog.active() || !reviewable(m.dialog.current()) {
		m.review = nil
		return
	}
	head := m.dialog.current()
	if m.review != nil && m.review.ev.RequestID == head.RequestID {
		return
	}
	var prop *engine.Event
	if p, ok := m.proposals[head.ToolCallID]; ok && isProposal(head) {
		prop = &p
	}
	m.review = newReview(head, prop, &m.theme, m.hunkSelect)
	m.review.workspace = m.ext.workspace
	m.review.who = m.dialog.children[head.RequestID]
}

func (m *Model) overlay() bool {
	return m.setup != nil || m.showHelp || m.picker != nil || m.sessions != nil || m.changeLog != nil || m.rewind != nil || m.dialog.active()
}

func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	now, prev := m.now(), m.lastKeyAt
	if !(m.promptOpen() && navKey(msg)) {
		m.lastKeyAt = now
	}
	if msg.String() != "ctrl+c" && (msg.String() != "ctrl+d" || m.input.Value() != "") {
		// Any other key ends a wait for a second quit key.
		m.clearQuit()
	}
	if m.showHelp {
		m.showHelp = false
		return nil
	}
	if m.sessions != nil && !m.dialog.active() {
		return m.onSessionKey(msg)
	}
	if m.rewind != nil && !m.dialog.active() {
		return m.onRewindKey(msg)
	}
	if m.changeLog != nil && !m.dialog.active() {
		closed, cmd := m.changeLog.update(msg, m.width)
		if closed {
			m.changeLog = nil
		}
		return cmd
	}
	if m.promptOpen() {
		// A prompt comes before any picker: a question must never wait
		// behind a list the person opened before it arrived.
		return m.onPromptKey(msg, now, prev)
	}
	if m.picker != nil {
		chosen, closed := m.picker.update(msg)
		switch {
		case closed:
			m.picker = nil
		case chosen != nil:
			return m.switchTo(m.picker.kind, chosen.runtime, chosen.model)
		}
		return nil
	}
	k := m.keys
	if msg.String() == "tab" && (m.completing != "" || len(m.completions()) > 0) {
		m.complete()
		return nil
	}
	m.completing = ""
	if cmd, ok := m.onMenuKey(msg); ok {
		return cmd
	}
	if _, ok := mentionQuery(m.input.Value()); ok && m.mention.loaded {
		switch msg.String() {
		case "tab":
			if m.completeMention() {
				return nil
			}
		case "up", "ctrl+p":
			m.mention.cursor = max(m.mention.cursor-1, 0)
			return nil
		case "down", "ctrl+n":
			m.mention.cursor++
			return nil
		}
	}
	switch {
	case key.Matches(msg, k.Quit):
		if cmd, done := m.quitKey(msg.String(), now); done {
			return cmd
		}
	case key.Matches(msg, k.Interrupt):
		return m.interrupt(now)
	case key.Matches(msg, k.ModeCycle):
		return m.cycleMode()
	case key.Matches(msg, k.Runtime):
		return m.fetchRuntimes(pickRuntime)
	case key.Matches(msg, k.Model):
		return m.fetchRuntimes(pickModel)
	case key.Matches(msg, k.ExpandTools):
		m.tr.expand = !m.tr.expand
		return nil
	case key.Matches(msg, k.Reasoning):
		m.tr.reasoning = !m.tr.reasoning
		return nil
	case key.Matches(msg, k.Undo) && m.input.Value() == "":
		// Undo rewrites files: the key only types the command, so a stray
		// ctrl+z never restores anything without an enter.
		m.input.SetValue("/undo")
		m.input.MoveToEnd()
		return nil
	case key.Matches(msg, k.ScrollUp):
		m.scrolled = true
		h := m.transcriptHeight()
		m.tr.scroll(m.renderCtx(), h, -max(h-2, 1))
		return nil
	case key.Matches(msg, k.ScrollDown):
		m.scrolled = true
		h := m.transcriptHeight()
		m.tr.scroll(m.renderCtx(), h, max(h-2, 1))
		return nil
	case key.Matches(msg, k.Help) && (msg.String() == "f1" || m.input.Value() == ""):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.Send):
		return m.send()
	case msg.String() == "backspace" && m.input.Value() == "" && m.detachLast():
		return nil
	case key.Matches(msg, k.HistoryPrev) && m.onFirstRow():
		m.browseHistory(-1)
		return nil
	case key.Matches(msg, k.HistoryNext) && m.onLastRow():
		m.browseHistory(1)
		return nil
	}
	var cmd tea.Cmd
	before := m.input.Value()
	m.input, cmd = m.input.Update(msg)
	if m.input.Value() != before {
		// The menu's matches changed: the highlight starts at the top.
		m.menuCursor, m.menuMoved = 0, false
	}
	if _, ok := mentionQuery(m.input.Value()); ok {
		m.mention.cursor = 0
		cmd = tea.Batch(cmd, m.loadFiles())
	}
	return cmd
}

// send submits the input, or queues it while a turn runs.
func (m *Model) send() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" && len(m.attached) == 0 {
		return nil
	}
	// Until the session is attached, messages queue and go once it is.
	busy := m.status.running || m.submitting || len(m.queue) > 0 || m.pre != nil
	m.input.Reset()
	if text != "" && (len(m.history) == 0 || m.history[len(m.history)-1] != text) {
		m.history = append(m.history, text)
	}
	m.histPos, m.draft = len(m.history), ""
	m.tr.toBottom()
	if strings.HasPrefix(text, "//") {
		text = text[1:] // "//x" sends "/x" as a prompt
	} else if strings.HasPrefix(text, "/") {
		return m.runCommand(text)
	} else if isMemoryLine(text) {
		// "# line" is for the project memory, never for the model.
		return m.remember(strings.TrimSpace(text[1:]))
	}
	images := m.attached
	m.attached = nil
	if busy {
		// The images go with the text: the queued message is sent as
		// typed, or given back whole (see unqueue).
		m.queue = append(m.queue, queued{text: text, images: images})
		return nil
	}
	return m.submitMessage(text, images)
}

// queued is a message typed while a turn ran, sent when the turn ends:
// its text and the images attached to it.
type queued struct {
	text   string
	images []engine.Image
}

// sendQueued sends the first queued message.
func (m *Model) sendQueued() tea.Cmd {
	next := m.queue[0]
	m.queue = m.queue[1:]
	return m.submitMessage(next.text, next.images)
}

func (m *Model) submit(text string) tea.Cmd { return m.submitMessage(text, nil) }

// submitMessage sends text with the attached images and the images its
// `@` mentions name. A session that takes no images, or whose runtime
// cannot see them, refuses the message before a turn starts; submitMsg
// then gives the text and the attachments back to the input.
func (m *Model) submitMessage(text string, images []engine.Image) tea.Cmd {
	m.submitting = true
	sess, ctx, r := m.sess, m.ctx, m.ext.mentions
	return func() tea.Msg {
		msg := expandMessage(ctx, r, text, images)
		if len(msg.Images) == 0 {
			return submitMsg{prompt: text, err: sess.Submit(msg.Text)}
		}
		ms, ok := sess.(MessageSubmitter)
		if !ok {
			return submitMsg{prompt: text, images: images, err: errors.New("this session takes no images")}
		}
		return submitMsg{prompt: text, images: images, err: ms.SubmitMessage(msg)}
	}
}

func (m *Model) browseHistory(dir int) {
	if len(m.history) == 0 {
		return
	}
	if m.histPos == len(m.history) {
		m.draft = m.input.Value()
	}
	m.histPos = min(max(m.histPos+dir, 0), len(m.history))
	if m.histPos == len(m.history) {
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[m.histPos])
	}
	m.input.MoveToEnd()
}

// unqueue puts the queued messages back into the input, ahead of what is
// there: a person who stops the agent wants it stopped, not handed the
// next message, and may still send them as they are.
func (m *Model) unqueue() {
	texts := make([]string, 0, len(m.queue)+1)
	var images []engine.Image
	for _, q := range m.queue {
		if q.text != "" {
			texts = append(texts, q.text)
		}
		images = append(images, q.images...)
	}
	if cur := m.input.Value(); cur != "" {
		texts = append(texts, cur)
	}
	m.input.SetValue(strings.Join(texts, "\n\n"))
	m.attached = append(images, m.attached...)
	m.tr.notice(fmt.Sprintf("interrupted: %s back in the input (enter sends)", plural(len(m.queue), "queued message")), "warn")
	m.queue = nil
	m.status.queued = 0
}

// hardStopWindow is how soon a second esc must follow the first to kill
// the turn hard. Short enough that two presses a while apart (the first
// one's stop is slow, the person presses again to see what happens) do not
// kill a command that is cleaning up; long enough for a deliberate double
// press.
const hardStopWindow = 1500 * time.Millisecond

// interrupt stops the running turn. The first esc stops it on every
// runtime: the streaming text, and running tools and commands politely
// (SIGTERM, then SIGKILL after a grace). A second esc within
// hardStopWindow kills hard: the CLI or the command's process tree gets
// SIGKILL at once and the turn ends. Without a running turn it drops the
// queued messages.
func (m *Model) interrupt(now time.Time) tea.Cmd {
	if !m.status.running {
		if len(m.queue) > 0 {
			m.tr.notice(fmt.Sprintf("dropped %d queued message(s)", len(m.queue)), "warn")
			m.queue = nil
		}
		return nil
	}
	immediate := m.interrupts > 0 && now.Sub(m.lastInterrupt) <= hardStopWindow
	m.interrupts++
	m.lastInterrupt = now
	if immediate {
		m.status.flash = "killing now…"
	} else {
		m.status.flash = "stopping… (esc again at once: kill)"
	}
	sess, turn := m.sess, m.status.turnID
	return func() tea.Msg {
		sess.InterruptTurn(turn, immediate)
		return nil
	}
}

func (m *Model) cycleMode() tea.Cmd {
	next := m.modeCursor.Next()
	sess := m.sess
	m.modeCursor = next
	return func() tea.Msg { return modeMsg{mode: next, err: sess.SetMode(next)} }
}

func (m *Model) fetchRuntimes(kind pickerKind) tea.Cmd {
	sess := m.sess
	return func() tea.Msg { return runtimesMsg{kind: kind, infos: sess.Runtimes(), state: sess.State()} }
}

func (m *Model) switchTo(kind pickerKind, runtime, model string) tea.Cmd {
	sess := m.sess
	return func() tea.Msg { return switchMsg{kind: kind, err: sess.SwitchRuntime(runtime, model)} }
}

func (m *Model) answer(a answerAction) tea.Cmd {
	sess := m.sess
	return func() tea.Msg { return answerMsg{requestID: a.requestID, err: sess.Answer(a.requestID, a.answer)} }
}

func (m *Model) refreshState() tea.Cmd {
	sess := m.sess
	return func() tea.Msg { return stateMsg{state: sess.State()} }
}

// onEvents folds a batch of engine events into the components.
func (m *Model) onEvents(msg eventsMsg) tea.Cmd {
	var cmd tea.Cmd
	// One notification per batch, for its first question, however many
	// arrive together.
	var notify tea.Cmd
	// ended says a turn ended in the batch: the TUI may come to rest.
	ended := false
	for _, ev := range msg.events {
		m.tr.apply(ev)
		if m.replaying {
			// Only the transcript replays: the status bar starts from
			// the stored totals, a stored request is never asked again
			// and nothing queued is sent (see replay).
			continue
		}
		m.status.apply(ev)
		m.recordChange(ev)
		switch ev.Type {
		case engine.EventUserMessage:
			m.submitting = false
		case engine.EventPermissionRequested:
			m.dialog.push(ev)
			if notify == nil {
				notify = m.notifyWaiting(permissionNote(ev))
			}
			// The help overlay would hide the question until a key
			// closes it: close it now.
			m.showHelp = false
		case engine.EventPatchProposed:
			if m.proposals == nil {
				m.proposals = map[string]engine.Event{}
			}
			m.proposals[ev.PatchID] = ev
		case engine.EventPatchApplied, engine.EventPatchRejected:
			delete(m.proposals, ev.PatchID)
		case engine.EventPermissionDecided:
			if ev.RequestID != "" {
				m.dialog.remove(ev.RequestID)
			}
		case engine.EventChild:
			// A subagent's question reaches the person as the parent's
			// do; the dialog names the subagent, and the answer goes
			// through the parent session, which routes it.
			if c := ev.Child; c != nil {
				switch c.Event.Type {
				case engine.EventPermissionRequested:
					m.dialog.pushChild(c.Event, childLabel(c))
					if notify == nil {
						notify = m.notifyWaiting(permissionNote(c.Event))
					}
					m.showHelp = false
				case engine.EventPermissionDecided:
					if c.Event.RequestID != "" {
						m.dialog.remove(c.Event.RequestID)
					}
				}
			}
		case engine.EventModeChanged:
			m.modeCursor = ev.Mode
		case engine.EventFinalResult:
			ended = true
			m.dialog.dropTurn(ev.TurnID)
			stopped := m.interrupts > 0 && ev.Status == string(engine.StatusInterrupted)
			m.interrupts = 0
			if stopped && len(m.queue) > 0 {
				m.unqueue()
			} else if len(m.queue) > 0 && cmd == nil {
				cmd = m.sendQueued()
			}
		}
	}
	if msg.state.Runtime != "" {
		running := m.status.running
		m.status.state = msg.state
		m.status.running = running
	}
	if ended && !m.status.running {
		return tea.Batch(cmd, notify, m.rest())
	}
	return tea.Batch(cmd, notify)
}
