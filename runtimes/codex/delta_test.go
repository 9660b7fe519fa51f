package codex

import (
	"testing"

	"github.com/kaizen-code/kz/runtimes/jsonrpc"
)

// Only the notifications that stream an item may wait for the reader's
// next frame: an item's end, the token count, the turn's end and every
// response and request are read at once.
func TestOnlyDeltasMayWait(t *testing.T) {
	for method, want := range map[string]bool{
		"item/agentMessage/delta":               true,
		"item/reasoning/textDelta":              true,
		"item/reasoning/summaryTextDelta":       true,
		"item/commandExecution/outputDelta":     true,
		"item/started":                          false,
		"item/completed":                        false,
		"thread/tokenUsage/updated":             false,
		"turn/completed":                        false,
		"item/commandExecution/requestApproval": false,
		"":                                      false,
	} {
		if got := isDelta(jsonrpc.Message{Method: method}); got != want {
			t.Errorf("isDelta(%q) = %v, want %v", method, got, want)
		}
	}
}
