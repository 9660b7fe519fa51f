package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// slashCommand is one command typed as "/name args" in the input.
type slashCommand struct {
	name string
	args string // how to call it, for the completion and /help
	desc string
	run  func(m *Model, args string) tea.Cmd
}

// slashCommands is the command table, in the order completion lists it.
var slashCommands = []slashCommand{
	{"help", "", "show keys and commands", func(m *Model, _ string) tea.Cmd { m.showHelp = true; return nil }},
	{"runtime", "[name]", "switch runtime (no name: the picker)", cmdRuntime},
	{"model", "[name]", "switch model (no name: the picker)", cmdModel},
	{"mode", "[mode]", "set the mode (no mode: the next one)", cmdMode},
	{"task", "RUNTIME PROMPT", "a subagent on RUNTIME answers PROMPT (shown as a card)", cmdTask},
	{"sessions", "", "open the session picker", cmdSessions},
	{"undo", "", "undo the last applied change", cmdUndo},
	{"changes", "", "the changes applied in this session, with their diffs", cmdChanges},
	{"compact", "", "compact the conversation", cmdCompact},
	{"rewind", "", "go back to before a turn: its files, and the conversation if asked", cmdRewind},
	{"clear", "", "clear the screen's transcript (the session keeps it)", cmdClear},
	{"cost", "", "tokens and cost of this session", cmdCost},
	{"export", "[file]", "write the transcript as markdown", cmdExport},
	{"permissions", "[revoke N]", "list the permission grants, or revoke one", cmdPermissions},
	{"memory", "[N]", "list the memory files (N: edit one); # at the start of a message remembers a line", cmdMemory},
	{"setup", "", "set up a provider, key and model, or an agent CLI, as the default runtime", func(m *Model, _ string) tea.Cmd { return m.openSetup() }},
	{"mcp", "", "the MCP servers: state, tools, errors", cmdMCP},
	{"reasoning", "[off|low|medium|high|N]", "how hard the model thinks (no argument: the next level)", cmdReasoning},
	{"quit", "", "quit kz", func(*Model, string) tea.Cmd { return tea.Quit }},
}

// commandMsg reports a command that ran in a Cmd.
type commandMsg struct {
	text   string
	style  string // "" or warn
	undone bool   // an undo succeeded
	// change is the change log's number (1-based) of the change undone;
	// 0 means the last one not undone yet (/undo).
	change int
	// revert is the change that undid an older one, logged in its turn.
	revert *appliedChange
	// compacted says a /compact ended, successfully or not.
	compacted bool
}

// commands are the built-in commands followed by the custom ones.
func (m *Model) commands() []slashCommand {
	if len(m.custom) == 0 {
		return slashCommands
	}
	return append(slices.Clip(slashCommands), m.custom...)
}

// findCommand returns the command named name, or the one command name is
// a prefix of.
func (m *Model) findCommand(name string) (*slashCommand, []string) {
	var prefixed []string
	var hit *slashCommand
	cmds := m.commands()
	for i := range cmds {
		c := &cmds[i]
		if c.name == name {
			return c, nil
		}
		if strings.HasPrefix(c.name, name) {
			prefixed = append(prefixed, c.name)
			hit = c
		}
	}
	if len(prefixed) == 1 {
		return hit, nil
	}
	return nil, prefixed
}

// runCommand runs a typed "/command args". "//text" sends "/text" as a
// prompt.
func (m *Model) runCommand(text string) tea.Cmd {
	name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	name = strings.ToLower(strings.TrimSpace(name))
	args = strings.TrimSpace(args)
	c, ambiguous := m.findCommand(name)
	if c == nil {
		msg := "unknown command /" + oneLine(name)
		switch {
		case len(ambiguous) > 1:
			msg += " — did you mean /" + strings.Join(ambiguous, ", /") + "?"
		case m.suggestCommand(name) != "":
			msg += " — did you mean /" + m.suggestCommand(name) + "?"
		}
		m.tr.notice(msg+" (/help lists them)", "warn")
		m.tr.toBottom()
		return nil
	}
	return c.run(m, args)
}

// suggestCommand is the command closest to a mistyped name, or "" when
// none is close.
func (m *Model) suggestCommand(name string) string {
	best, bestD := "", 3
	for _, c := range m.commands() {
		if d := editDistance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// completions are the commands matching the input while it is a bare
// "/prefix": prefix matches first, then names that contain it.
func (m *Model) completions() []slashCommand {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") || strings.ContainsAny(v, " \n") {
		return nil
	}
	p := strings.ToLower(v[1:])
	var pre, sub []slashCommand
	for _, c := range m.commands() {
		switch {
		case strings.HasPrefix(c.name, p):
			pre = append(pre, c)
		case strings.Contains(c.name, p):
			sub = append(sub, c)
		}
	}
	return append(pre, sub...)
}

// complete replaces the input with the next completion; repeated tabs
// cycle through them.
func (m *Model) complete() {
	cs := m.completions()
	if len(cs) == 0 && m.completing != "" {
		// The input holds a completion already: cycle from the prefix
		// that was typed.
		m.input.SetValue(m.completing)
		cs = m.completions()
	}
	if len(cs) == 0 {
		return
	}
	if m.completing == "" {
		// The first tab takes the highlighted command of the menu.
		m.completing, m.completeIdx = m.input.Value(), min(m.menuCursor, len(cs)-1)
	} else {
		m.completeIdx = (m.completeIdx + 1) % len(cs)
	}
	m.input.SetValue("/" + cs[m.completeIdx].name + " ")
	m.input.MoveToEnd()
}

// completionView lists the completions above the input, the highlighted
// one (menuCursor) always among the rows shown.
func (m *Model) completionView(t *themes.Theme) string {
	cs := m.completions()
	if len(cs) == 0 {
		return ""
	}
	cur := min(m.menuCursor, len(cs)-1)
	w := 0
	for _, c := range cs {
		w = max(w, ansi.StringWidth(c.name+" "+c.args))
	}
	start := 0
	if cur >= menuRows {
		start = cur - menuRows + 1
	}
	lines := make([]string, 0, menuRows+2)
	if start > 0 {
		lines = append(lines, t.Muted.Render(fmt.Sprintf("  … %d above", start)))
	}
	for i := start; i < len(cs) && i < start+menuRows; i++ {
		c := cs[i]
		use := "/" + c.name
		if c.args != "" {
			use += " " + c.args
		}
		row := ansi.Truncate(use+strings.Repeat(" ", max(w+2-ansi.StringWidth(use), 1))+c.desc, m.width-2, "…")
		if i == cur {
			lines = append(lines, t.Selected.Render(row))
		} else {
			lines = append(lines, t.Text.Render(row))
		}
	}
	if n := len(cs) - start - menuRows; n > 0 {
		lines = append(lines, t.Muted.Render(fmt.Sprintf("  … %d more", n)))
	}
	lines = append(lines, t.Muted.Render("↑↓ choose · tab complete · enter run"))
	return strings.Join(lines, "\n")
}

// menuRows is how many commands the menu shows at once.
const menuRows = 6

// onMenuKey moves the highlight of the command menu while it is open,
// and takes the highlighted command with enter. It reports whether it
// used the key.
func (m *Model) onMenuKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	cs := m.completions()
	if len(cs) == 0 {
		return nil, false
	}
	cur := min(m.menuCursor, len(cs)-1)
	browsing := m.histPos < len(m.history) && !m.menuMoved && m.input.Value() == m.history[m.histPos]
	switch msg.String() {
	case "up", "ctrl+p", "down", "ctrl+n":
		if browsing {
			// A command recalled from history: the arrows go on through
			// the history, not into the menu it opened.
			return nil, false
		}
	}
	switch msg.String() {
	case "up", "ctrl+p":
		m.menuCursor, m.menuMoved = (cur-1+len(cs))%len(cs), true
	case "down", "ctrl+n":
		m.menuCursor, m.menuMoved = (cur+1)%len(cs), true
	case "enter":
		if !m.menuMoved {
			// Enter without choosing runs what was typed, so a
			// prefix of several commands is questioned, not guessed.
			return nil, false
		}
		m.input.SetValue("/" + cs[cur].name)
		return m.send(), true
	default:
		return nil, false
	}
	return nil, true
}

func cmdRuntime(m *Model, args string) tea.Cmd {
	if args == "" {
		return m.fetchRuntimes(pickRuntime)
	}
	return m.switchTo(pickRuntime, args, "")
}

func cmdModel(m *Model, args string) tea.Cmd {
	if args == "" {
		return m.fetchRuntimes(pickModel)
	}
	return m.switchTo(pickModel, m.status.state.Runtime, args)
}

func cmdMode(m *Model, args string) tea.Cmd {
	if args == "" {
		return m.cycleMode()
	}
	mode := engine.Mode(strings.ToLower(args))
	if !slices.Contains(engine.Modes, mode) {
		names := make([]string, len(engine.Modes))
		for i, x := range engine.Modes {
			names[i] = string(x)
		}
		m.tr.notice(fmt.Sprintf("unknown mode %q: use %s", oneLine(args), strings.Join(names, ", ")), "warn")
		return nil
	}
	sess := m.sess
	m.modeCursor = mode
	return func() tea.Msg { return modeMsg{mode: mode, err: sess.SetMode(mode)} }
}

func cmdSessions(m *Model, _ string) tea.Cmd {
	if m.ext.sessions == nil {
		m.tr.notice("the session picker is not available here (no session store)", "warn")
		return nil
	}
	return m.openSessions(true)
}

func cmdUndo(m *Model, _ string) tea.Cmd {
	if m.ext.undo == nil {
		m.tr.notice("undo is not available here", "warn")
		return nil
	}
	if m.status.running {
		m.tr.notice("wait for the turn to end before undoing", "warn")
		return nil
	}
	u, ctx := m.ext.undo, m.ctx
	return func() tea.Msg {
		what, err := u.UndoLast(ctx)
		if err != nil {
			return commandMsg{text: "undo failed: " + err.Error(), style: "warn"}
		}
		return commandMsg{text: "undone: " + what, undone: true}
	}
}

func cmdChanges(m *Model, _ string) tea.Cmd {
	m.changeLog = newChangeLog(m.changes, &m.theme)
	m.changeLog.undo = m.undoChange
	return nil
}

// compacter is the session's compaction on request; *engine.Session
// implements it. It is asserted rather than part of Session so that a
// session without it still drives the TUI (/compact then says so).
type compacter interface {
	Compact(ctx context.Context) (engine.Event, error)
}

// cmdCompact asks the session to compact the conversation, from a Cmd: it
// calls the runtime's model and may take seconds. Until it ends the input
// counts as submitting, so prompts typed meanwhile queue instead of meeting
// a busy session; afterCompact sends the first of them. The divider with
// the token counts comes with the compact_boundary event.
func cmdCompact(m *Model, _ string) tea.Cmd {
	c, ok := m.sess.(compacter)
	switch {
	case !ok:
		m.tr.notice("this session cannot compact on request", "warn")
		return nil
	case m.status.running || m.submitting:
		m.tr.notice("wait for the turn to end before compacting (or interrupt it)", "warn")
		return nil
	}
	m.submitting = true
	// The progress is a status flash, not a transcript notice: it goes
	// away when the compaction ends (afterCompact), whatever the outcome.
	m.status.flash = "compacting the conversation…"
	ctx := m.ctx
	return func() tea.Msg {
		ev, err := c.Compact(ctx)
		if err != nil {
			return commandMsg{text: "/compact: " + err.Error(), style: "warn", compacted: true}
		}
		return commandMsg{text: fmt.Sprintf("compacted %s → %s tokens: later turns start from the summary",
			fmtTokens(int64(ev.TokensBefore)), fmtTokens(int64(ev.TokensAfter))), compacted: true}
	}
}

// afterCompact ends the compaction's hold on the input and sends the first
// prompt queued meanwhile.
func (m *Model) afterCompact() tea.Cmd {
	m.submitting = false
	m.status.flash = ""
	if m.status.running || len(m.queue) == 0 {
		return nil
	}
	return m.sendQueued()
}

func cmdClear(m *Model, _ string) tea.Cmd {
	if m.status.running {
		m.tr.notice("wait for the turn to end before clearing", "warn")
		return nil
	}
	expand, reasoning, ws := m.tr.expand, m.tr.reasoning, m.tr.workspace
	m.tr = newTranscript()
	m.tr.expand, m.tr.reasoning, m.tr.workspace = expand, reasoning, ws
	m.tr.notice("screen cleared — the conversation and its context go on (/export writes all of it)", "")
	return nil
}

func cmdCost(m *Model, _ string) tea.Cmd {
	s := m.status
	u := s.total
	u.InputTokens += s.turn.InputTokens
	u.OutputTokens += s.turn.OutputTokens
	text := fmt.Sprintf("this session: %d tokens in, %d out (cache read %d, write %d) · $%.4f",
		u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, s.totalCost+s.turnCost)
	if b := s.state.Limits.BudgetUSD; b > 0 {
		text += fmt.Sprintf(" · budget $%.2f, $%.4f left", b, max(b-s.totalCost-s.turnCost, 0))
	}
	m.tr.notice(text, "")
	m.tr.toBottom()
	return nil
}

// Grant is one remembered permission: Scope "session" (allow for
// session, kept in the gate's memory) or "always" (persisted in the
// grants file), and the grant's key or rule as the gate spells it.
type Grant struct {
	Scope string
	Rule  string
}

// GrantManager lists and revokes the grants in effect for the session;
// internal/app implements it over the permission gate and the grants file.
type GrantManager interface {
	ListGrants(ctx context.Context) ([]Grant, error)
	RevokeGrant(ctx context.Context, g Grant) error
}

// cmdPermissions lists the modes and the grants, numbered; "/permissions
// revoke N" revokes grant N of that list.
func cmdPermissions(m *Model, args string) tea.Cmd {
	st := m.status.state
	head := fmt.Sprintf("permission mode: %s · mode: %s", orDash(string(st.PermissionMode)), orDash(string(st.Mode)))
	gm, ctx := m.ext.grants, m.ctx
	if gm == nil {
		m.tr.notice(head+"\ngrants cannot be listed here", "")
		m.tr.toBottom()
		return nil
	}
	args = strings.TrimSpace(args)
	if args == "" {
		return func() tea.Msg {
			gs, err := gm.ListGrants(ctx)
			if err != nil {
				return commandMsg{text: head + "\ncould not list grants: " + err.Error(), style: "warn"}
			}
			return commandMsg{text: head + "\n" + grantList(gs)}
		}
	}
	verb, num, _ := strings.Cut(args, " ")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if verb != "revoke" || err != nil || n < 1 {
		m.tr.notice("usage: /permissions (list) or /permissions revoke N", "warn")
		m.tr.toBottom()
		return nil
	}
	return func() tea.Msg {
		// Numbers refer to the list as it is now, read again here.
		gs, err := gm.ListGrants(ctx)
		if err != nil {
			return commandMsg{text: "could not list grants: " + err.Error(), style: "warn"}
		}
		if n > len(gs) {
			return commandMsg{text: fmt.Sprintf("no grant %d: there are %d", n, len(gs)), style: "warn"}
		}
		g := gs[n-1]
		if err := gm.RevokeGrant(ctx, g); err != nil {
			return commandMsg{text: "could not revoke: " + err.Error(), style: "warn"}
		}
		return commandMsg{text: fmt.Sprintf("revoked %s grant %s", g.Scope, g.Rule)}
	}
}

func grantList(gs []Grant) string {
	if len(gs) == 0 {
		return "no grants: every ask is asked again"
	}
	var b strings.Builder
	b.WriteString("grants (/permissions revoke N):")
	for i, g := range gs {
		fmt.Fprintf(&b, "\n  %d. %-7s %s", i+1, g.Scope, oneLine(g.Rule))
	}
	return b.String()
}

func cmdExport(m *Model, args string) tea.Cmd {
	sess, st, dir := m.sess, m.status.state, m.ext.workspace
	path, named := args, args != ""
	if !named {
		id := st.ID
		if len(id) > 8 {
			id = id[:8]
		}
		path = "kz-session-" + orDash(id) + ".md"
	}
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	return func() tea.Msg {
		doc := exportMarkdown(st, sess.Transcript())
		written, err := writeExport(path, doc, !named)
		switch {
		case errors.Is(err, fs.ErrExist):
			return commandMsg{text: fmt.Sprintf("export failed: %s already exists; /export FILE writes to another file", path), style: "warn"}
		case err != nil:
			return commandMsg{text: "export failed: " + err.Error() + "; /export FILE writes elsewhere", style: "warn"}
		}
		return commandMsg{text: "transcript written to " + written}
	}
}

// writeExport writes a new file and refuses to overwrite one: an export
// must never destroy a file the person has. With numbered set, a name
// that is taken is tried again as NAME-2.md, NAME-3.md …, so that the
// default name of /export works more than once. It returns the path
// written. Its errors say the path once, not once per layer.
func writeExport(path, doc string, numbered bool) (string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	try := path
	var f *os.File
	for n := 2; ; n++ {
		var err error
		f, err = os.OpenFile(try, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !numbered || !errors.Is(err, fs.ErrExist) || n > 999 {
			return "", pathError("create", try, err)
		}
		try = fmt.Sprintf("%s-%d%s", base, n, ext)
	}
	if _, err := f.WriteString(doc); err != nil {
		_ = f.Close()
		return "", pathError("write", try, err)
	}
	if err := f.Close(); err != nil {
		return "", pathError("close", try, err)
	}
	return try, nil
}

// pathError says what failed on path, with the cause without the path it
// already names (os errors carry it).
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

// exportMarkdown renders a transcript as a markdown document.
func exportMarkdown(st engine.State, entries []engine.TranscriptEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kz session %s\n\nruntime %s · model %s · mode %s\n\n", st.ID, st.Runtime, st.Model, st.Mode)
	fence := func(s string) string {
		f := "```"
		for strings.Contains(s, f) {
			f += "`"
		}
		return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n\n"
	}
	for _, e := range entries {
		switch e.Kind {
		case engine.EntryUser:
			fmt.Fprintf(&b, "## You\n\n%s\n\n", e.Text)
		case engine.EntryAssistant:
			fmt.Fprintf(&b, "## Assistant (%s)\n\n%s\n\n", orDash(e.Runtime), e.Text)
		case engine.EntryReasoning:
			fmt.Fprintf(&b, "<details><summary>reasoning</summary>\n\n%s\n\n</details>\n\n", e.Text)
		case engine.EntryToolCall:
			fmt.Fprintf(&b, "**tool %s** (%s)\n\n", e.Tool, orDash(e.Status))
			if len(e.Input) > 0 {
				b.WriteString(fence(string(e.Input)))
			}
			if e.Output != "" {
				b.WriteString(fence(e.Output))
			}
		case engine.EntryError:
			fmt.Fprintf(&b, "> error: %s\n\n", e.Text)
		case engine.EntryTurnEnd:
			b.WriteString("---\n\n")
		default:
			if e.Text != "" {
				fmt.Fprintf(&b, "_%s: %s_\n\n", e.Kind, oneLine(e.Text))
			} else if e.Status != "" {
				fmt.Fprintf(&b, "_%s: %s_\n\n", e.Kind, e.Status)
			}
		}
	}
	return b.String()
}
