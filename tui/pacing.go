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
// Invariant: any message other than a delta-only event batch, a frame
// tick or a spinner tick drops the kept frame, so keys, resizes, tool
// events and the final message are drawn in the very next frame; and while a kept frame lags
// (behind), a frame tick is scheduled (Model.afterUpdate), so the last
// deltas of a stream are always drawn.
type framePacer struct {
	view   tea.View
	at     time.Time
	valid  bool
	behind bool
}

// note records a message about to be handled. off turns pacing off (the
// quiet mode of tests, which has no ticks to catch up with).
func (p *framePacer) note(msg tea.Msg, off bool) {
	if off || !paced(msg) {
		p.valid, p.behind = false, false
		return
	}
	if _, tick := msg.(frameMsg); !tick {
		p.behind = true
	}
}

// cached returns the kept frame when it may be shown again at now.
func (p *framePacer) cached(now time.Time) (tea.View, bool) {
	if p.valid && now.Sub(p.at) < streamFrameInterval {
		return p.view, true
	}
	return tea.View{}, false
}

// keep stores a freshly composed frame.
func (p *framePacer) keep(v tea.View, now time.Time) {
	p.view, p.at, p.valid, p.behind = v, now, true, false
}

// untilFresh is how long the kept frame is still served, or 0 when none
// is: a frame tick due earlier would find it fresh and draw nothing, so
// the ticks that follow a stream wait this long at least (afterUpdate).
func (p *framePacer) untilFresh(now time.Time) time.Duration {
	if !p.valid {
		return 0
	}
	return max(p.at.Add(streamFrameInterval).Sub(now), 0)
}

// catchUp is how long to wait before the frame that draws what the kept
// frame lacks, or false when it lacks nothing.
func (p *framePacer) catchUp(now time.Time) (time.Duration, bool) {
	if !p.behind || !p.valid {
		return 0, false
	}
	return max(p.at.Add(streamFrameInterval).Sub(now), time.Millisecond), true
}

// paced reports a message whose effect on the screen may wait for the
// next paced frame: a batch of streamed text or reasoning, a frame tick,
// or a spinner tick. The spinner turns about 12 times a second; were its
// ticks drawn at once, each would add a whole frame (the transcript
// composed, the terminal diffed) to the 30 a stream already takes, when
// its turn can as well be drawn with the next one, at most a frame
// interval later.
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
// now is drawn at once unless a kept frame is still fresh, so the next
// frame is due a frame interval after the kept one, or after now.
func (p *framePacer) gatherUntil(now time.Time) time.Time {
	if p.valid && now.Sub(p.at) < streamFrameInterval {
		return p.at.Add(streamFrameInterval)
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
