package tui

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	gansi "charm.land/glamour/v2/ansi"
)

// Rendering ahead. A finished message that comes into view before glamour
// has rendered it at the current width is shown as a plain stand-in and
// redrawn styled once a background render is done, so the screen settles
// only then. One 1.5 KB answer costs glamour about 10 to 25 ms, more than
// a frame: paging back through a long session settles at once only if the
// messages a page brings into view were rendered before the key came.
// The model therefore keeps one render running on another goroutine at a
// time, for the nearest message that lacks one: those on screen first,
// then those within aheadPages screens above the view, then those within
// belowPages screens below it.
//
// A render off screen waits until no key, wheel or paste has come for
// aheadDelay: on two cores a render running beside the frame of a key
// takes the core that frame needs, and a person paging fast wants that
// frame, not the one after. Once input pauses, rendering goes on up to
// aheadPages screens above the view, so a burst of that many quick PgUps
// finds every page ready: paging costs one screen's layout and the
// terminal diff, never a glamour render.
//
// Each render is kept per message and width (mdDoc), so a message is
// rendered once per width however often it is paged past, and a width
// change renders again only what comes near the view. What is kept is
// bounded: renders of items more than keepItems items away from the view
// are dropped a few items per update (see evictFar) and made again if the
// view comes back to them. A 1,000-turn session paged to its top thus
// holds the rendered lines of about keepItems items, not of every turn.
const (
	aheadPages = 8
	belowPages = 1
	// aheadDelay is how long input must pause before a render off
	// screen starts: a little more than a frame at 60 frames a second.
	aheadDelay = 20 * time.Millisecond
	// keepItems is how far from the first item shown (in items, either
	// way) rendered lines are kept: about 100 turns of a prompt, a tool
	// call and an answer, some 40 screens at 200×50, about 2 MB. It is
	// far more than aheadPages, so nothing rendered ahead is dropped
	// before it is shown.
	keepItems = 400
	// evictBatch is how many items one update looks at for renders to
	// drop: enough to sweep a 5,000-item session in a few seconds of
	// updates, little enough that an update never walks the transcript.
	evictBatch = 64
	// streamTail is how many items at the end of the transcript may be
	// streaming (see transcript.streaming); they are never evicted.
	streamTail = 3
)

// bgRenderer is the glamour renderer that background renders share, and
// the time of the last input, which renders off screen wait to be past.
// Building a glamour renderer costs about 4 ms, a sixth of a message's
// render, so one is kept across renders. The model starts one render at a
// time; the mutex keeps the renderer safe should two ever overlap.
type bgRenderer struct {
	mu sync.Mutex
	r  *mdRenderer
	// lastInput is the time of the last key, wheel or paste, in Unix
	// nanoseconds; written on the UI goroutine, read by renders.
	lastInput atomic.Int64
	// now and sleep are the clock renders wait by (tests replace them).
	now   func() time.Time
	sleep func(time.Duration)
}

func newBGRenderer(style gansi.StyleConfig) *bgRenderer {
	return &bgRenderer{r: newMDRenderer(style), now: time.Now, sleep: time.Sleep}
}

// noteInput records the time of a message a person sent: a key, the
// wheel or a paste.
func (bg *bgRenderer) noteInput(msg tea.Msg) {
	switch msg.(type) {
	case tea.KeyPressMsg, tea.MouseWheelMsg, tea.PasteMsg:
		bg.lastInput.Store(bg.now().UnixNano())
	}
}

// waitIdle returns once no input has come for aheadDelay. Input that
// keeps coming keeps it waiting: a render never starts within aheadDelay
// of a key.
func (bg *bgRenderer) waitIdle() {
	for {
		quiet := bg.now().Sub(time.Unix(0, bg.lastInput.Load()))
		if quiet >= aheadDelay {
			return
		}
		bg.sleep(aheadDelay - quiet)
	}
}

// renderDoc renders a complete message's source, cut at cuts, at width.
func (bg *bgRenderer) renderDoc(src string, cuts []int, width int) (all []string, stable int) {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	all = appendChunks(nil, bg.r, src, cuts, 0, width)
	stable = len(all)
	all = appendTail(all, bg.r, src[lastOf(cuts):], width, true)
	return all, stable
}

// nextPrerender returns a render job for the nearest complete message
// that has no render at width, looking on screen (height lines from the
// first item shown), then above the view, then below it; nil when every
// message near the view is rendered. It only reads sizes already known
// (see estHeight): it never renders on the UI goroutine.
func (tr *transcript) nextPrerender(bg *bgRenderer, width, height int) func() prerendered {
	if len(tr.items) == 0 || height <= 0 {
		return nil
	}
	top := min(tr.top, len(tr.items)-1)
	job := visitor(func(i int) func() prerendered {
		if i < top-tr.keep/2 {
			// Beyond what evictFar keeps: see its invariant.
			return nil
		}
		if it := tr.items[i]; it.kind == kindAssistant && !it.open {
			return it.md.prerender(bg, width)
		}
		return nil
	})
	end, j := tr.walkDown(top, height, width, job)
	if j != nil {
		return j
	}
	if j = tr.walkUp(top-1, aheadPages*height, width, job); j == nil {
		_, j = tr.walkDown(end, belowPages*height, width, job)
	}
	if j == nil {
		return nil
	}
	// Off screen, nobody waits for it: it starts once input pauses and
	// the frame of the key that moved the view is on the terminal,
	// instead of taking a core from it.
	return func() prerendered {
		bg.waitIdle()
		return j()
	}
}

// visitor looks at item i and returns its render job, or nil.
type visitor func(i int) func() prerendered

// walkDown visits items from i on until they fill lines lines, and
// returns the index after the last item visited and the first job a visit
// returned (the walk stops there).
func (tr *transcript) walkDown(i, lines, width int, visit visitor) (int, func() prerendered) {
	for n := 0; i < len(tr.items) && n < lines; i++ {
		if j := visit(i); j != nil {
			return i, j
		}
		n += tr.items[i].estHeight(width) + 1
	}
	return i, nil
}

// walkUp visits items from i back until they fill lines lines, and returns
// the first job a visit returned.
func (tr *transcript) walkUp(i, lines, width int, visit visitor) func() prerendered {
	for n := 0; i >= 0 && n < lines; i-- {
		if j := visit(i); j != nil {
			return j
		}
		n += tr.items[i].estHeight(width) + 1
	}
	return nil
}

// coldNear reports a message on screen still waiting for its styled
// render, whose stand-in a coming frame replaces.
func (tr *transcript) coldNear(width, height int) bool {
	if len(tr.items) == 0 {
		return false
	}
	cold := false
	tr.walkDown(min(tr.top, len(tr.items)-1), height, width, func(i int) func() prerendered {
		if it := tr.items[i]; it.kind == kindAssistant && !it.open && it.md.cold(width) {
			cold = true
		}
		return nil
	})
	return cold
}

// estHeight is the number of lines the item takes at width as far as it
// is known without rendering: its render or stand-in at that width, else
// an estimate from its text. It is only used to decide how far ahead to
// render, never to lay out the screen.
func (it *item) estHeight(width int) int {
	if it.kind == kindAssistant {
		d := it.md
		switch {
		case d.rendered && d.width == width:
			return len(d.all)
		case d.ph != nil && d.phWidth == width:
			return len(d.ph)
		}
		src := d.Text()
		return strings.Count(src, "\n") + 1 + len(src)/max(width, 1)
	}
	if it.cache != nil && it.cacheW == width {
		return len(it.cache)
	}
	return 1
}

// evictFar looks at the next evictBatch items of a sweep that goes round
// the transcript, and drops the render of each that lies more than keep
// items above the first item shown, or more than keep items (and three
// screens' worth) below it. An item that still changes (a streaming
// message, a running card) keeps its lines. A transcript of no more than
// twice keep items is left alone: all of it is near the view.
//
// Invariant: nothing nextPrerender renders is ever dropped, or it would
// render the same message again and again. It renders items from the
// screen down, which is at most (1+belowPages) screens of at least one
// line each, and items up to keep/2 above top; both lie inside what is
// kept, whatever the heights of the items.
func (tr *transcript) evictFar(height int) {
	n := len(tr.items)
	if n <= 2*tr.keep {
		return
	}
	lo, hi := tr.top-tr.keep, tr.top+max(tr.keep, (2+belowPages)*height)
	for range evictBatch {
		if tr.sweep >= n {
			tr.sweep = 0
		}
		i := tr.sweep
		tr.sweep++
		// The last items keep their lines too: streaming() reads a
		// message there without a render as one lagging its source.
		if (i < lo || i > hi) && i < n-streamTail {
			tr.items[i].evict()
		}
	}
}

// evict drops the item's rendered lines; the next frame that shows it
// renders it again.
func (it *item) evict() {
	switch {
	case it.open:
	case it.kind == kindAssistant:
		it.md.evict()
	case it.kind == kindTool && it.card.status == cardRunning:
	default:
		it.invalidate()
	}
}

// evict drops a complete message's render and its plain stand-in, as if
// it had never been drawn. Its source and the cuts found in it stay.
func (d *mdDoc) evict() {
	if !d.done {
		return
	}
	d.all, d.stableLen, d.chunksDone, d.rendered = nil, 0, 0, false
	d.tailLen, d.tailDone = 0, false
	d.ph, d.phWidth = nil, 0
}

// renderedBytes is the size of the rendered lines the transcript holds
// (tests and benchmarks read it to check what evictFar bounds).
func (tr *transcript) renderedBytes() int {
	n := 0
	count := func(lines []string) {
		for _, l := range lines {
			n += len(l)
		}
	}
	for _, it := range tr.items {
		if it.kind == kindAssistant {
			count(it.md.all)
			count(it.md.ph)
		}
		count(it.cache)
	}
	return n
}
