package tui

import (
	"context"
	"fmt"

	"github.com/kaizen-code/kz/engine"
)

// History replays a stored session's events in sequence order;
// *store.Store implements it.
type History interface {
	Events(ctx context.Context, sessionID string, fn func(engine.Event) error) error
}

// replay renders a reopened session (--continue, --resume, the session
// picker) from its stored events, through the very fold live events go
// through (onEvents, transcript.apply), so the screen after reopening is
// the screen the person saw live at the same width. Only what must not
// happen twice is left out: a stored permission request is not asked
// again, the status bar keeps the stored totals the session reports, and
// nothing is submitted. A last turn that stopped without its final_result
// (kz was killed) ends here: its running calls are shown interrupted.
func (m *Model) replay(ctx context.Context, h History) error {
	id := m.sess.State().ID
	if h == nil || id == "" {
		return nil
	}
	m.replaying = true
	defer func() { m.replaying = false }()
	err := h.Events(ctx, id, func(ev engine.Event) error {
		m.onEvents(eventsMsg{events: []engine.Event{ev}})
		return nil
	})
	m.tr.closeStreams("")
	m.tr.flushDeferred()
	m.tr.closeAll()
	if err != nil {
		return fmt.Errorf("replay session %s: %w", id, err)
	}
	return nil
}
