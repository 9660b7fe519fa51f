package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// pageToTop presses pgup until the view shows the first line, letting the
// background renders finish between keys as they do between a person's
// key presses.
func pageToTop(t *testing.T, m *Model) {
	t.Helper()
	for page := 0; !m.tr.atTop(); page++ {
		if page > 1000 {
			t.Fatal("pgup never reached the top")
		}
		_, cmd := m.Update(keyMsg("pgup"))
		_ = m.View()
		settleJobs(m, cmd)
	}
}

// quietTwin builds the same session as longSession with every message
// rendered in the frame that shows it, on the UI goroutine: what the
// screen must look like whatever was rendered ahead, dropped or rendered
// again.
func quietTwin(t *testing.T, n, w, h int) *Model {
	t.Helper()
	m := longSession(t, n, w, h)
	m.quiet = true
	for _, it := range m.tr.items {
		it.evict()
	}
	return m
}

// TestPagingToTopShowsFirstTurnExactly pages a session to its top with
// the renders done ahead in the background, as the program runs, and
// requires the very screen a model that renders each message when it is
// shown draws there, first turn first; then the same after a width change
// at the top, which renders the view again at the new width.
func TestPagingToTopShowsFirstTurnExactly(t *testing.T) {
	const n, w, h = 30, 90, 28
	m := longSession(t, n, w, h)
	pageToTop(t, m)
	want := quietTwin(t, n, w, h)
	want.press("pgup")
	for !want.tr.atTop() {
		want.press("pgup")
	}
	if got, exp := m.View().Content, want.View().Content; got != exp {
		t.Fatalf("the top of the session differs from a render on demand:\n%s\n---- want ----\n%s", ansi.Strip(got), ansi.Strip(exp))
	}
	if first := strings.TrimSpace(strings.SplitN(m.screen(), "\n", 2)[0]); first != "› question 1" {
		t.Fatalf("the first line at the top is %q, not the first prompt", first)
	}
	if m.tr.coldNear(w, h) {
		t.Fatal("the top shows plain stand-ins after the renders settled")
	}

	const narrow = 60
	_, cmd := m.Update(teaSize(narrow, h))
	_ = m.View()
	settleJobs(m, cmd)
	want.update(teaSize(narrow, h))
	got, exp := m.View().Content, want.View().Content
	if got != exp {
		t.Fatalf("after the width change the top differs from a render on demand:\n%s\n---- want ----\n%s", ansi.Strip(got), ansi.Strip(exp))
	}
	for _, l := range m.tr.view(m.renderCtx(), h/2) {
		if textWidth(l) > narrow {
			t.Fatalf("a line is wider than %d after the width change: %q", narrow, ansi.Strip(l))
		}
	}
}

// TestFarRendersAreDroppedAndDrawnAgainTheSame pages a session longer
// than the kept window to its top and back to the end: the rendered lines
// the transcript holds stay bounded by the window, not by the session,
// and every screen drawn again from dropped renders is the screen drawn
// before.
func TestFarRendersAreDroppedAndDrawnAgainTheSame(t *testing.T) {
	const n, w, h = 110, 90, 28
	m := longSession(t, n, w, h)
	m.tr.keep = 24
	bottom := m.View().Content
	type page struct {
		anchor, line int
		screen       string
	}
	var pages []page
	maxHeld := 0
	for n := 0; !m.tr.atTop(); n++ {
		if n > 1000 {
			t.Fatal("pgup never reached the top")
		}
		_, cmd := m.Update(keyMsg("pgup"))
		settleJobs(m, cmd)
		pages = append(pages, page{m.tr.anchor, m.tr.anchorLine, m.View().Content})
		// The session was built at the bottom, every turn drawn there:
		// the sweep needs a page's updates to go round it once.
		if n >= 2 {
			maxHeld = max(maxHeld, m.tr.renderedBytes())
		}
	}
	// Everything rendered at once, for scale.
	all := quietTwin(t, n, w, h)
	for _, it := range all.tr.items {
		it.lines(all.renderCtx())
	}
	whole := all.tr.renderedBytes()
	if maxHeld*3 > whole {
		t.Fatalf("paging held %d bytes of rendered lines at most, against %d for the whole session: far renders were not dropped", maxHeld, whole)
	}
	// Back down to each page seen on the way up, its renders dropped
	// since: each screen as it was the first time.
	for i := len(pages) - 1; i >= 0; i-- {
		p := pages[i]
		m.tr.anchor, m.tr.anchorLine = p.anchor, p.line
		_, cmd := m.Update(frameMsg{})
		settleJobs(m, cmd)
		if got := m.View().Content; got != p.screen {
			t.Fatalf("page %d drawn again differs from the first time:\n%s\n---- first ----\n%s", i, ansi.Strip(got), ansi.Strip(p.screen))
		}
	}
	m.tr.toBottom()
	_, cmd := m.Update(frameMsg{})
	settleJobs(m, cmd)
	if got := m.View().Content; got != bottom {
		t.Fatalf("back at the end the screen differs:\n%s\n---- before ----\n%s", ansi.Strip(got), ansi.Strip(bottom))
	}
}

// TestRendersOffScreenWaitForInputToPause checks the gate a render off
// screen passes before it starts: it waits until no key, wheel or paste
// has come for aheadDelay, and keys that keep coming keep it waiting.
func TestRendersOffScreenWaitForInputToPause(t *testing.T) {
	bg := newBGRenderer(themeForBench().Markdown)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bg.now = func() time.Time { return clock }
	var slept []time.Duration
	// keysLeft more keys come, one during each sleep, 5 ms into it.
	keysLeft := 0
	bg.sleep = func(d time.Duration) {
		slept = append(slept, d)
		if keysLeft > 0 {
			keysLeft--
			clock = clock.Add(5 * time.Millisecond)
			bg.noteInput(keyMsg("pgup"))
			return
		}
		clock = clock.Add(d)
	}

	bg.waitIdle()
	if len(slept) != 0 {
		t.Fatalf("with no input at all the render waited %v", slept)
	}

	bg.noteInput(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	clock = clock.Add(8 * time.Millisecond)
	bg.waitIdle()
	if len(slept) != 1 || slept[0] != aheadDelay-8*time.Millisecond {
		t.Fatalf("8 ms after a wheel event the render waited %v, want one wait of %v", slept, aheadDelay-8*time.Millisecond)
	}

	slept, keysLeft = nil, 3
	bg.noteInput(keyMsg("pgup"))
	start := clock
	bg.waitIdle()
	if len(slept) != 4 {
		t.Fatalf("three keys during the wait: waited %v, want four waits", slept)
	}
	if quiet := clock.Sub(start); quiet != 3*5*time.Millisecond+aheadDelay {
		t.Fatalf("the render started %v after the first key, want %v (aheadDelay after the last)", quiet, 3*5*time.Millisecond+aheadDelay)
	}

	// Messages a person did not send do not hold renders back.
	slept = nil
	bg.noteInput(frameMsg{})
	bg.noteInput(tea.WindowSizeMsg{Width: 80, Height: 24})
	bg.waitIdle()
	if len(slept) != 0 {
		t.Fatalf("a frame tick and a resize held the render back: %v", slept)
	}
}
