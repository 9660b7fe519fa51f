package tui

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
)

// settleJobs runs cmd and every command it leads to, each on its own
// goroutine as Bubble Tea runs them, drawing a frame after every update as
// the program does; it returns how many background renders were installed.
func settleJobs(m *Model, cmd tea.Cmd) int {
	installed := 0
	for cmd != nil {
		done := make(chan []tea.Msg)
		go func(c tea.Cmd) { done <- runCmd(c) }(cmd)
		var next []tea.Cmd
		for _, msg := range <-done {
			if _, ok := msg.(prerenderedMsg); ok {
				installed++
			}
			_, c := m.Update(msg)
			_ = m.View()
			next = append(next, c)
		}
		cmd = tea.Batch(next...)
	}
	return installed
}

// longSession builds a model (rendering in the background, as the program
// does) over n turns whose answers vary in length, each turn a prompt, a
// tool call and a markdown answer, with every background render done.
func longSession(t *testing.T, n, w, h int) *Model {
	t.Helper()
	m := testModel(t, newFake(), w, h)
	m.quiet = false
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("c%d", i)
		_, cmd := m.Update(eventsMsg{events: []engine.Event{
			{Type: engine.EventUserMessage, TurnID: int64(i), Text: fmt.Sprintf("question %d", i)},
			{Type: engine.EventToolCallStarted, TurnID: int64(i), ToolCallID: id, Tool: "read_file", Input: []byte(`{"path":"main.go"}`)},
			{Type: engine.EventToolCallFinished, TurnID: int64(i), ToolCallID: id, Tool: "read_file", Output: "a\nb\nc\n"},
			{Type: engine.EventAssistantMessage, TurnID: int64(i), Text: benchMarkdown(200 + 97*(i%9))},
			{Type: engine.EventFinalResult, TurnID: int64(i), Status: "complete"},
		}})
		_ = m.View()
		settleJobs(m, cmd)
	}
	return m
}

// assistantsAbove returns the indexes of the complete messages within
// lines lines above the view's first item.
func (tr *transcript) assistantsAbove(lines, width int) []int {
	var out []int
	for i, n := min(tr.top, len(tr.items)-1)-1, 0; i >= 0 && n < lines; i-- {
		if it := tr.items[i]; it.kind == kindAssistant && !it.open {
			out = append(out, i)
		}
		n += tr.items[i].estHeight(width) + 1
	}
	return out
}

// TestPageUpFindsMessagesRenderedAhead pages back through a session,
// letting the background renders finish between keys as they do between
// a person's key presses: every page must come up styled at once, never
// as plain stand-ins waiting for glamour, and the messages two screens
// above the view must be rendered already.
func TestPageUpFindsMessagesRenderedAhead(t *testing.T) {
	const w, h = 100, 30
	m := longSession(t, 60, w, h)
	for page := 0; !m.tr.atTop(); page++ {
		_, cmd := m.Update(keyMsg("pgup"))
		_ = m.View()
		if m.tr.coldNear(w, h) {
			t.Fatalf("page %d: the view shows plain stand-ins", page)
		}
		settleJobs(m, cmd)
		for _, i := range m.tr.assistantsAbove(aheadPages*h, w) {
			if m.tr.items[i].md.cold(w) {
				t.Fatalf("page %d: message %d, within %d screens above the view, is not rendered", page, i, aheadPages)
			}
		}
		if page > 400 {
			t.Fatal("pgup never reached the top")
		}
	}
}

// TestRenderCachedByWidth checks that a finished item is rendered once per
// width: a second frame at the same width reuses the lines, a width change
// renders again at the new width (no line wider), and the words are the
// same at both widths.
func TestRenderCachedByWidth(t *testing.T) {
	rc := goldenCtx(80)
	msg := &item{kind: kindAssistant, md: &mdDoc{}}
	msg.md.Append(benchMarkdown(900))
	msg.md.Finish()
	user := &item{kind: kindUser, text: "a prompt long enough to wrap at a narrow width, with several words in it"}
	for _, it := range []*item{msg, user} {
		first := it.lines(rc)
		// A later frame: a render would record its time.
		rendered, later := msg.md.lastRender, *rc
		later.now = rc.now.Add(time.Hour)
		again := it.lines(&later)
		if len(first) == 0 || &first[0] != &again[0] || msg.md.lastRender != rendered {
			t.Fatalf("%s: a second frame at the same width rendered again", it.kind)
		}
		// wordsOf copies: a message reuses its lines' slice at a new width.
		words := wordsOf(first)
		narrow := *rc
		narrow.width = 40
		lines := it.lines(&narrow)
		if len(lines) <= len(first) {
			t.Fatalf("%s: a width change did not render again (%d lines at 80, %d at 40)", it.kind, len(first), len(lines))
		}
		for _, l := range lines {
			if textWidth(l) > 40 {
				t.Fatalf("%s: line wider than 40 after the width change: %q", it.kind, ansi.Strip(l))
			}
		}
		if got := wordsOf(lines); !slices.Equal(got, words) {
			t.Fatalf("%s: the words changed with the width:\n%v\n%v", it.kind, words, got)
		}
	}
}

func wordsOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, splitWords(ansi.Strip(l))...)
	}
	return out
}

func splitWords(s string) []string {
	var out []string
	word := []rune{}
	for _, r := range s {
		switch r {
		case ' ', '│', '─', '•', '┃':
			if len(word) > 0 {
				out = append(out, string(word))
				word = word[:0]
			}
		default:
			word = append(word, r)
		}
	}
	if len(word) > 0 {
		out = append(out, string(word))
	}
	return out
}

// TestBackgroundRendersShareOneRenderer runs background renders of
// different messages at once on the shared renderer (the race detector
// watches it) and checks each against the message rendered on its own.
func TestBackgroundRendersShareOneRenderer(t *testing.T) {
	th := themeForBench()
	bg := newBGRenderer(th.Markdown)
	var docs []*mdDoc
	for i := range 6 {
		d := &mdDoc{}
		d.Append(benchMarkdown(300 + 200*i))
		d.Finish()
		docs = append(docs, d)
	}
	results := make([]prerendered, len(docs))
	var wg sync.WaitGroup
	for i, d := range docs {
		job := d.prerender(bg, 70)
		if job == nil {
			t.Fatalf("message %d needs no render", i)
		}
		wg.Go(func() { results[i] = job() })
	}
	wg.Wait()
	for i, d := range docs {
		if !d.install(results[i]) {
			t.Fatalf("message %d: the render was not installed", i)
		}
		want := newMDRenderer(th.Markdown).render(d.Text(), 70)
		if got := d.Lines(nil, 70, goldenT0, false, true); !slices.Equal(got, want) {
			t.Fatalf("message %d: the shared renderer's lines differ from a render of its own", i)
		}
		if d.prerender(bg, 70) != nil {
			t.Fatalf("message %d: rendered at 70 but still asks for a render", i)
		}
	}
}
