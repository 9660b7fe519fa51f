package acp

import (
	"testing"

	"github.com/kaizen-code/kz/runtimes/jsonrpc"
)

// Only the updates that stream the agent's text or thought may wait for
// the reader's next frame.
func TestOnlyChunksMayWait(t *testing.T) {
	for _, tc := range []struct {
		method, params string
		want           bool
	}{
		{"session/update", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}`, true},
		{"session/update", `{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}}`, true},
		{"session/update", `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"ls"}}`, false},
		{"session/update", `{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}`, false},
		{"session/request_permission", `{"sessionId":"s","toolCall":{"toolCallId":"t"}}`, false},
		{"", `{"stopReason":"end_turn"}`, false},
	} {
		if got := isChunk(jsonrpc.Message{Method: tc.method, Params: []byte(tc.params)}); got != tc.want {
			t.Errorf("isChunk(%s %s) = %v, want %v", tc.method, tc.params, got, tc.want)
		}
	}
}
