package tui

import (
	"strings"
	"sync"
	"time"

	gansi "charm.land/glamour/v2/ansi"
)

// Rendering ahead. A finished message that comes into view before glamour
// has rendered it at the current width is shown as a plain stand-in and
// redrawn styled once a background render is done, so the screen settles
// only then. One 1.5 KB answer costs glamour about 25 ms, more than a
// frame: paging back through a long session settles at once only if the
// messages a page brings into view were rendered before the key came.
// The model therefore keeps one render running on another goroutine at a
// time, for the nearest message that lacks one: those on screen first,
// then those within aheadPages screens above the view, then those within
// belowPages screens below it; a render off screen starts aheadDelay
// late. Each render is kept per message and width (mdDoc), so a message
// is rendered once per width however often it is paged past, and a width
// change renders again only what comes near the view.
const (
	aheadPages = 2
	belowPages = 1
	// aheadDelay is how long a render of a message off screen waits
	// before it starts: a little more than a frame at 60 frames a second.
	aheadDelay = 20 * time.Millisecond
)

// bgRenderer is the glamour renderer that background renders share.
// Building a glamour renderer costs about 4 ms, a sixth of a message's
// render, so one is kept across renders. The model starts one render at a
// time; the mutex keeps the renderer safe should two ever overlap.
type bgRenderer struct {
	mu sync.Mutex
	r  *mdRenderer
}

func newBGRenderer(style gansi.StyleConfig) *bgRenderer {
	return &bgRenderer{r: newMDRenderer(style)}
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
	// Off screen, nobody waits for it: it starts once the frame of the
	// key that moved the view is on the terminal, instead of taking a
	// core from it.
	return func() prerendered {
		time.Sleep(aheadDelay)
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
