package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// sessionLimit is how many sessions the picker loads.
const sessionLimit = 10000

// sessionFirstPage is how many sessions the picker's first listing loads:
// enough for any screen, so the picker opens at once; the full listing,
// which the filter needs, follows in a second query.
const sessionFirstPage = 200

// Messages of the session picker's IO, which runs in Cmds.
type (
	sessionsMsg struct {
		here     bool
		sessions []engine.SessionInfo
		err      error
		// partial marks the first page; the full listing replaces it.
		partial bool
	}
	sessionDeletedMsg struct {
		id  string
		err error
	}
	sessionRenamedMsg struct {
		id, title string
		err       error
	}
)

// sessionPicker lists stored sessions with a fuzzy filter. Choosing one
// asks Run to return a ResumeRequest; deleting asks for confirmation
// first. It does no IO itself.
type sessionPicker struct {
	here     bool // this directory only, or all
	loading  bool
	partial  bool // only the first page is loaded so far
	all      []engine.SessionInfo
	hay      []string // lower-cased search text of each session
	matches  []int    // indexes into all, best first
	lastQ    string
	cursor   int
	filter   textinput.Model
	confirm  string // the id waiting for delete confirmation
	err      string
	current  string // the session this TUI runs
	deleting bool
	// canRename says the store can rename; renaming is the id whose new
	// title is being typed in title.
	canRename bool
	renaming  string
	title     textinput.Model
}

func newSessionPicker(here bool, current string, canRename bool) *sessionPicker {
	in := textinput.New()
	in.Prompt = "filter › "
	in.Placeholder = "type to filter by title, id, runtime or directory"
	// A steady cursor: a blinking one repaints twice a second for nothing.
	ist := in.Styles()
	ist.Cursor.Blink = false
	in.SetStyles(ist)
	in.Focus()
	ti := textinput.New()
	ti.Prompt = "new title › "
	ti.CharLimit = 200
	ist = ti.Styles()
	ist.Cursor.Blink = false
	ti.SetStyles(ist)
	return &sessionPicker{here: here, loading: true, filter: in, current: current, canRename: canRename, title: ti}
}

// openSessions shows the picker and loads the sessions.
func (m *Model) openSessions(here bool) tea.Cmd {
	_, canRename := m.ext.sessions.(SessionRenamer)
	m.sessions = newSessionPicker(here, m.status.state.ID, canRename)
	return m.loadSessions(here)
}

func (m *Model) loadSessions(here bool) tea.Cmd {
	st, ctx, ws := m.ext.sessions, m.ctx, m.ext.workspace
	if !here {
		ws = ""
	}
	list := func(limit int, partial bool) tea.Cmd {
		return func() tea.Msg {
			ss, err := st.ListSessions(ctx, ws, limit)
			return sessionsMsg{here: here, sessions: ss, err: err, partial: partial && len(ss) == limit}
		}
	}
	// Both run at once; onSessions drops a first page that arrives after
	// the full listing.
	return tea.Batch(list(sessionFirstPage, true), list(sessionLimit, false))
}

// load installs a listing, keeping the cursor on the same session.
func (p *sessionPicker) load(ss []engine.SessionInfo, partial bool) {
	var keep string
	if s, ok := p.selected(); ok {
		keep = s.ID
	}
	p.loading, p.partial, p.all = false, partial, ss
	defer func() {
		for k, i := range p.matches {
			if keep != "" && p.all[i].ID == keep {
				p.cursor = k
				return
			}
		}
		p.cursor = min(p.cursor, max(len(p.matches)-1, 0))
	}()
	p.hay = make([]string, len(ss))
	for i, s := range ss {
		p.hay[i] = strings.ToLower(s.Title + " " + s.ID + " " + runtimesOf(s) + " " + s.Model + " " + s.Workspace)
	}
	p.lastQ = "\x00" // force a full filter
	p.refilter()
}

// refilter applies the filter. A query that extends the previous one only
// searches the previous matches, which keeps typing fast over thousands
// of sessions.
func (p *sessionPicker) refilter() {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	if q == p.lastQ {
		return
	}
	var from []int
	if p.lastQ != "\x00" && strings.HasPrefix(q, p.lastQ) && p.matches != nil {
		from = p.matches
	}
	p.lastQ = q
	type scored struct{ i, score int }
	var hits []scored
	consider := func(i int) {
		if s, ok := fuzzyScore(p.hay[i], q); ok {
			hits = append(hits, scored{i, s})
		}
	}
	if from != nil {
		for _, i := range from {
			consider(i)
		}
	} else {
		for i := range p.all {
			consider(i)
		}
	}
	if q != "" {
		// Stable by score: the store's order (most recent first) breaks ties.
		sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	}
	p.matches = make([]int, len(hits))
	for k, h := range hits {
		p.matches[k] = h.i
	}
	p.cursor = min(p.cursor, max(len(p.matches)-1, 0))
}

// fuzzyScore matches q as a subsequence of hay. Consecutive characters
// and matches at word starts score higher; a plain substring scores
// highest.
func fuzzyScore(hay, q string) (int, bool) {
	if q == "" {
		return 0, true
	}
	if i := strings.Index(hay, q); i >= 0 {
		return 1000 - min(i, 500), true
	}
	score, qi, run := 0, 0, 0
	qr := []rune(q)
	prev := ' '
	for _, r := range hay {
		if qi < len(qr) && r == qr[qi] {
			qi++
			run++
			score += run
			if !unicode.IsLetter(prev) && !unicode.IsDigit(prev) {
				score += 3
			}
		} else {
			run = 0
		}
		prev = r
	}
	return score, qi == len(qr)
}

// sessionAction is what a key in the picker asks of the root model.
type sessionAction struct {
	open, remove     string
	rename, newTitle string
	scope            bool // toggle this directory / all
	close            bool
}

// update handles a key.
func (p *sessionPicker) update(msg tea.KeyPressMsg) (sessionAction, tea.Cmd) {
	if p.renaming != "" {
		switch msg.String() {
		case "enter":
			id, title := p.renaming, strings.TrimSpace(p.title.Value())
			p.renaming = ""
			p.title.Blur()
			p.filter.Focus()
			if title == "" {
				return sessionAction{}, nil
			}
			return sessionAction{rename: id, newTitle: title}, nil
		case "esc":
			p.renaming = ""
			p.title.Blur()
			p.filter.Focus()
			return sessionAction{}, nil
		}
		var cmd tea.Cmd
		p.title, cmd = p.title.Update(msg)
		return sessionAction{}, cmd
	}
	if p.confirm != "" {
		id := p.confirm
		p.confirm = ""
		if msg.String() == "y" {
			p.deleting = true
			return sessionAction{remove: id}, nil
		}
		return sessionAction{}, nil
	}
	switch msg.String() {
	case "esc", "ctrl+c":
		return sessionAction{close: true}, nil
	case "up", "ctrl+p":
		p.cursor = max(p.cursor-1, 0)
		return sessionAction{}, nil
	case "down", "ctrl+n":
		p.cursor = min(p.cursor+1, max(len(p.matches)-1, 0))
		return sessionAction{}, nil
	case "tab":
		return sessionAction{scope: true}, nil
	case "enter":
		if s, ok := p.selected(); ok {
			if s.ID == p.current {
				p.err = "this is the session you are in"
				return sessionAction{}, nil
			}
			return sessionAction{open: s.ID}, nil
		}
		return sessionAction{}, nil
	case "ctrl+r":
		if !p.canRename {
			p.err = "renaming needs a newer store"
			return sessionAction{}, nil
		}
		if s, ok := p.selected(); ok {
			p.renaming = s.ID
			p.title.SetValue(s.Title)
			p.title.CursorEnd()
			p.filter.Blur()
			return sessionAction{}, p.title.Focus()
		}
		return sessionAction{}, nil
	case "ctrl+x", "delete":
		if s, ok := p.selected(); ok {
			if s.ID == p.current {
				p.err = "the session you are in cannot be deleted from here"
				return sessionAction{}, nil
			}
			p.confirm = s.ID
		}
		return sessionAction{}, nil
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	p.refilter()
	return sessionAction{}, cmd
}

func (p *sessionPicker) selected() (engine.SessionInfo, bool) {
	if p.cursor < len(p.matches) {
		return p.all[p.matches[p.cursor]], true
	}
	return engine.SessionInfo{}, false
}

// removed drops a deleted session from the listing.
func (p *sessionPicker) removed(id string) {
	p.deleting = false
	for i, s := range p.all {
		if s.ID == id {
			p.all = append(p.all[:i:i], p.all[i+1:]...)
			p.hay = append(p.hay[:i:i], p.hay[i+1:]...)
			break
		}
	}
	p.lastQ = "\x00"
	p.refilter()
}

func (p *sessionPicker) view(t *themes.Theme, width, maxHeight int, now time.Time) string {
	inner := max(width-4, 10)
	scope := "this directory"
	if !p.here {
		scope = "all directories"
	}
	count := fmt.Sprintf(" · %s · %d of %d", scope, len(p.matches), len(p.all))
	if p.partial {
		count += "+ (loading the rest…)"
	}
	head := t.Accent.Render("Sessions") + t.Muted.Render(count)
	lines := []string{ansi.Truncate(head, inner, "…")}
	p.filter.SetWidth(inner - 10)
	lines = append(lines, p.filter.View())
	rows := max(maxHeight-6, 1)
	switch {
	case p.loading:
		lines = append(lines, t.Muted.Render("loading…"))
	case len(p.matches) == 0:
		lines = append(lines, t.Muted.Render("no session matches"))
	}
	start := 0
	if p.cursor >= rows {
		start = p.cursor - rows + 1
	}
	for k := start; k < len(p.matches) && k < start+rows; k++ {
		s := p.all[p.matches[k]]
		title := s.Title
		if title == "" {
			title = "(untitled)"
		}
		mark := "  "
		if s.ID == p.current {
			mark = "● "
		}
		id := s.ID
		if len(id) > 8 {
			id = id[:8]
		}
		row := fmt.Sprintf("%s%-8s %s  %s · %s · %s · $%.2f", mark, id, oneLine(title), orDash(runtimesOf(s)), localStamp(s.Updated, now.Location()), plural(s.Turns, "turn"), s.CostUSD)
		if !p.here {
			row += " · " + oneLine(s.Workspace)
		}
		row = ansi.Truncate(row, inner, "…")
		if k == p.cursor {
			row = t.Selected.Render(row + strings.Repeat(" ", max(inner-ansi.StringWidth(row), 0)))
		} else {
			row = t.Text.Render(row)
		}
		lines = append(lines, row)
	}
	switch {
	case p.renaming != "":
		p.title.SetWidth(inner - 14)
		lines = append(lines, p.title.View(), t.Muted.Render("enter rename · esc cancel"))
	case p.confirm != "":
		lines = append(lines, t.Danger.Render(fmt.Sprintf("delete session %s and its transcript? y delete · any other key keeps it", p.confirm)))
	case p.err != "":
		lines = append(lines, t.Error.Render(ansi.Truncate(oneLine(p.err), inner, "…")))
	default:
		keys := "↑↓ choose · enter open · ctrl+x delete · tab this directory/all · esc close"
		if p.canRename {
			keys = "↑↓ choose · enter open · ctrl+r rename · ctrl+x delete · tab this directory/all · esc close"
		}
		lines = append(lines, t.Muted.Render(ansi.Wordwrap(keys, inner, "")))
	}
	return dialogBox(t, width, lines)
}

// stampLayout is how the TUI writes a date: the person's local date and
// time to the minute, the way `kz sessions` lists them.
const stampLayout = "2006-01-02 15:04"

// localStamp writes t as a date and time in loc, the zone of the clock
// the view was given (time.Local in kz, a fixed zone in tests).
func localStamp(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format(stampLayout)
}

// onSessionKey routes a key to the session picker and carries out what it
// asks.
func (m *Model) onSessionKey(msg tea.KeyPressMsg) tea.Cmd {
	act, cmd := m.sessions.update(msg)
	switch {
	case act.close:
		m.sessions = nil
	case act.open != "":
		m.resumeID = act.open
		return tea.Quit
	case act.scope:
		return m.openSessions(!m.sessions.here)
	case act.rename != "":
		st, ctx, id, title := m.ext.sessions.(SessionRenamer), m.ctx, act.rename, act.newTitle
		return func() tea.Msg { return sessionRenamedMsg{id: id, title: title, err: st.RenameSession(ctx, id, title)} }
	case act.remove != "":
		st, ctx, id := m.ext.sessions, m.ctx, act.remove
		return func() tea.Msg { return sessionDeletedMsg{id: id, err: st.DeleteSession(ctx, id)} }
	}
	return cmd
}

func (m *Model) onSessions(msg sessionsMsg) {
	if m.sessions == nil || m.sessions.here != msg.here {
		return // closed, or the scope changed meanwhile
	}
	if msg.err != nil {
		m.sessions.loading = false
		m.sessions.err = "could not list sessions: " + msg.err.Error()
		return
	}
	if msg.partial && !m.sessions.loading && !m.sessions.partial {
		return // the full listing came first
	}
	m.sessions.load(msg.sessions, msg.partial)
}

func (m *Model) onSessionDeleted(msg sessionDeletedMsg) {
	if m.sessions == nil {
		return
	}
	if msg.err != nil {
		m.sessions.deleting = false
		m.sessions.err = "could not delete: " + msg.err.Error()
		return
	}
	m.sessions.removed(msg.id)
}

func (m *Model) onSessionRenamed(msg sessionRenamedMsg) {
	if m.sessions == nil {
		return
	}
	if msg.err != nil {
		m.sessions.err = "could not rename: " + msg.err.Error()
		return
	}
	m.sessions.renamed(msg.id, msg.title)
}

// renamed updates a renamed session in the listing.
func (p *sessionPicker) renamed(id, title string) {
	for i := range p.all {
		if p.all[i].ID == id {
			s := &p.all[i]
			s.Title = title
			p.hay[i] = strings.ToLower(s.Title + " " + s.ID + " " + runtimesOf(*s) + " " + s.Model + " " + s.Workspace)
			break
		}
	}
	p.lastQ = "\x00"
	p.refilter()
}

// runtimesOf names every runtime the session ran turns on, in order of first
// use ("claude-code→native"), or its latest runtime when the store listed
// none (a session without turns).
func runtimesOf(s engine.SessionInfo) string {
	if len(s.Runtimes) == 0 {
		return s.Runtime
	}
	return strings.Join(s.Runtimes, "→")
}
