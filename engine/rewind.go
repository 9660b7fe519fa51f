package engine

import (
	"context"
	"encoding/json"
	"fmt"
)

// rewindMark is what a conversation_rewound marker keeps in its
// transcript entry's Input.
type rewindMark struct {
	Turn int64 `json:"turn"`
	Last int64 `json:"last"`
}

// RewindConversation takes the conversation back to before turn (the
// second choice of /rewind). Nothing is deleted: a conversation_rewound
// marker is appended, and from then on every runtime is primed with the
// conversation as it was before that turn (see RewoundHistory). The CLI
// runtimes' own sessions hold the turns given up, so none of them is
// resumed; each starts fresh from kz's history. It refuses while a turn
// runs and for a turn the session does not have, and returns once the
// marker is stored.
func (s *Session) RewindConversation(ctx context.Context, turn int64) error {
	s.mu.Lock()
	switch {
	case s.cur != nil:
		s.mu.Unlock()
		return fmt.Errorf("rewind: %w", ErrBusy)
	case s.closed:
		s.mu.Unlock()
		return fmt.Errorf("rewind: %w", ErrClosed)
	case turn < 1 || turn > s.lastTurn:
		last := s.lastTurn
		s.mu.Unlock()
		return fmt.Errorf("rewind: the session has no turn %d (its turns are 1 to %d)", turn, last)
	}
	s.emitLocked(Event{Type: EventConversationRewound, RewindTurn: turn, LastTurn: s.lastTurn,
		Text: fmt.Sprintf("conversation rewound to before turn %d", turn)})
	clear(s.natives)
	s.mu.Unlock()
	if err := s.journal.Flush(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("rewind: %w: %w", ErrNotSaved, err)
	}
	return nil
}

// RewoundHistory drops what conversation_rewound markers gave up: each
// marker removes the entries before it of the turns from its target on
// (the marker itself stays, so a runtime sees that the conversation went
// back). Entries after a marker are kept whatever their turn.
func RewoundHistory(entries []TranscriptEntry) []TranscriptEntry {
	last := -1
	for i, e := range entries {
		if isRewind(e) {
			last = i
		}
	}
	if last < 0 {
		return entries
	}
	out := make([]TranscriptEntry, 0, len(entries))
	for _, e := range entries {
		if isRewind(e) {
			m := markOf(e)
			kept := out[:0]
			for _, x := range out {
				if keepBefore(x, m) {
					kept = append(kept, x)
				}
			}
			out = kept
		}
		out = append(out, e)
	}
	return out
}

// keepBefore says whether an entry before a rewind marker stays: one of a
// turn before the target, an earlier marker, or an entry of no turn. A
// compaction's summary may cover the turns given up, so it goes; the
// entries it summarised are all still there.
func keepBefore(x TranscriptEntry, m rewindMark) bool {
	switch {
	case isRewind(x):
		return true
	case x.Kind == EntryMarker && x.Status == string(EventCompactBoundary):
		return false
	}
	return x.TurnID == 0 || x.TurnID < m.Turn
}

// invalidNatives drops the CLI runtimes' own sessions that a stored
// rewind gave up: a session recorded at or before the marker's last turn
// holds turns the conversation no longer has.
func invalidNatives(entries []TranscriptEntry, natives map[string]NativeRef) {
	var last int64 = -1
	for _, e := range entries {
		if isRewind(e) {
			last = markOf(e).Last
		}
	}
	if last < 0 {
		return
	}
	for k, v := range natives {
		if v.TurnID <= last {
			delete(natives, k)
		}
	}
}

func isRewind(e TranscriptEntry) bool {
	return e.Kind == EntryMarker && e.Status == string(EventConversationRewound)
}

func markOf(e TranscriptEntry) rewindMark {
	var m rewindMark
	_ = json.Unmarshal(e.Input, &m)
	return m
}
