package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// awaitEvent reads sub's events in order, handing each to stop, until
// stop reports true for one, which it returns. stop may act on the
// events it passes over (answer a request, interrupt the turn). The test
// fails when the subscription ends first or after 10 seconds: a turn of
// these tests takes milliseconds, so a wait that long means it hangs.
func awaitEvent(t *testing.T, sub *engine.Subscription, stop func(engine.Event) bool) engine.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for an event: %v", err)
		}
		if stop(ev) {
			return ev
		}
	}
}

// isType is the stop of awaitEvent that waits for an event of type typ.
func isType(typ engine.EventType) func(engine.Event) bool {
	return func(ev engine.Event) bool { return ev.Type == typ }
}
