package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
)

// streamFrameInterval is the shortest time between two frames composed
// while only streamed text arrives: 20 frames a second. Bubble Tea calls
// View after every message, and a model streaming fast sends hundreds of
// deltas a second; composing a frame for each, and having the renderer
// diff it against the terminal, would cost far more than anyone can see.
// Each frame of a full screen costs the renderer about as much whatever
// changed in it (it parses the whole frame into cells and diffs every
// line), so the frame rate is what a long stream pays for: at 30 a
// second the diffing was a quarter of the CPU of streaming 200 KB. Text
// that grows 20 times a second still reads as a steady flow.
const streamFrameInterval = time.Second / 20

// framePacer keeps the last composed frame and serves it again while
// nothing but streamed text (and the frame ticks that catch up with it)
// arrived since, for at most streamFrameInterval. The renderer compares a
// served frame with the one on the terminal and, finding it equal, writes
// nothing, so both the composition and the terminal diffing are paced.
//
// Streamed text is held back only by a frame that showed streamed text:
// a frame the spinner's turn alone brought does not make the next words
// wait. Held by any frame, the first words after a pause waited up to an
// interval whenever the spinner had turned in the last one (a spinner
// tick comes 12 times a second). The rate of frames stays bounded: frames
// that show new text come at most once an interval, and any other frame
// at most once an interval after the last frame of either kind.
//
// A spinner's turn that comes within an interval of the last frame asks
// for no frame of its own: the next frame draws it, whichever brings it
// (more text, or the spinner's next tick, which comes more than an
// interval later). A frame of its own was due when the text's next frame
// was, and, drawn just before the text came, made two frames of one.
//
// Invariant: any message other than a delta-only event batch, a frame
// tick or a spinner tick drops the kept frame, so keys, resizes, tool
// events and the final message are drawn in the very next frame; and
// while streamed text waits (text), a frame tick is scheduled
// (Model.afterUpdate), so the last deltas of a stream are always drawn.
type framePacer struct {
	view tea.View
	// at is when the kept frame was composed, textAt when the last frame
	// that showed newly streamed text was.
	at, textAt time.Time
	valid      bool
	// text: streamed text arrived since the kept frame was composed.
	text bool
}

// note records a message about to be handled. off turns pacing off (the
// quiet mode of tests, which has no ticks to catch up with).
func (p *framePacer) note(msg tea.Msg, off bool) {
	if off || !paced(msg) {
		p.valid = false
		return
	}
	if _, ok := msg.(eventsMsg); ok {
		p.text = true
	}
}

// since is when the frame that holds the next one back was composed: the
// last one that showed streamed text when streamed text waits, else the
// kept frame.
func (p *framePacer) since() time.Time {
	if p.text {
		return p.textAt
	}
	return p.at
}

// cached returns the kept frame when it may be shown again at now.
func (p *framePacer) cached(now time.Time) (tea.View, bool) {
	if p.valid && now.Sub(p.since()) < streamFrameInterval {
		return p.view, true
	}
	return tea.View{}, false
}

// keep stores a freshly composed frame.
func (p *framePacer) keep(v tea.View, now time.Time) {
	if p.text {
		p.textAt = now
	}
	p.view, p.at, p.valid, p.text = v, now, true, false
}

// untilFresh is how long the kept frame is still served, or 0 when none
// is: a frame tick due earlier would find it fresh and draw nothing, so
// the ticks that follow a stream wait this long at least (afterUpdate).
func (p *framePacer) untilFresh(now time.Time) time.Duration {
	if !p.valid {
		return 0
	}
	return max(p.since().Add(streamFrameInterval).Sub(now), 0)
}

// catchUp is how long to wait before the frame that draws the streamed
// text the kept frame lacks, or false when it lacks none, or when the
// text is drawn at once: Bubble Tea calls View after every Update, and a
// kept frame that may not be served again is composed anew there. (A
// tick for that frame came a millisecond later and found it fresh: a
// wake-up for nothing, 20 a second in a stream.)
func (p *framePacer) catchUp(now time.Time) (time.Duration, bool) {
	if !p.text || !p.valid {
		return 0, false
	}
	wait := p.textAt.Add(streamFrameInterval).Sub(now)
	if wait <= 0 {
		return 0, false
	}
	return wait, true
}

// paced reports a message whose effect on the screen may wait for the
// next paced frame: a batch of streamed text or reasoning, a frame tick,
// or a spinner tick. The spinner turns about 12 times a second; were its
// ticks drawn at once, each would add a whole frame (the transcript
// composed, the terminal diffed) to the 20 a stream already takes, when
// its turn can as well be drawn with the next one.
func paced(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case frameMsg, spinner.TickMsg:
		return true
	case eventsMsg:
		for _, ev := range msg.events {
			if ev.Type != engine.EventTextDelta && ev.Type != engine.EventReasoningDelta {
				return false
			}
		}
		return len(msg.events) > 0
	}
	return false
}

// gatherUntil is when the frame after the one about to be drawn is due:
// streamed text that arrives before then cannot be shown earlier, so it
// may wait and come in one message (see gatherDeltas). A message handled
// now is drawn at once unless a frame that showed streamed text is still
// fresh, so the next frame is due a frame interval after that one, or
// after now.
func (p *framePacer) gatherUntil(now time.Time) time.Time {
	if p.valid && now.Sub(p.textAt) < streamFrameInterval {
		return p.textAt.Add(streamFrameInterval)
	}
	return now.Add(streamFrameInterval)
}

// eventSource is the part of an engine subscription gatherDeltas needs.
type eventSource interface {
	NextBatch(ctx context.Context) ([]engine.Event, error)
}

// deadlineSource is a source that can wait for a deadline and still be
// woken early by anything but streamed text (*engine.Subscription): the
// gathering goroutine then sleeps once per frame instead of waking for
// each delta, which at a delta a millisecond cost more CPU than the
// deltas themselves.
type deadlineSource interface {
	NextBatchBy(ctx context.Context, deadline time.Time) ([]engine.Event, error)
}

// gatherDeltas appends to evs, a batch just received, the batches that
// arrive until deadline, as long as everything is streamed text: any other
// event (a tool call, a question, the final message) ends the wait at
// once, so nothing but streamed text is ever delayed, and streamed text
// by no more than it would wait for its frame. The subscription merges
// queued deltas, so a gathered batch stays short. Cancelling ctx ends the
// wait too; the next wait reports it.
func gatherDeltas(ctx context.Context, src eventSource, evs []engine.Event, deadline time.Time) []engine.Event {
	if !paced(eventsMsg{events: evs}) {
		return evs
	}
	if ds, ok := src.(deadlineSource); ok {
		more, err := ds.NextBatchBy(ctx, deadline)
		if err != nil {
			return evs
		}
		return append(evs, more...)
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for {
		more, err := src.NextBatch(wctx)
		if err != nil {
			return evs
		}
		evs = append(evs, more...)
		if !paced(eventsMsg{events: more}) {
			return evs
		}
	}
}
