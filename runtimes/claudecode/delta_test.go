package claudecode

import (
	"encoding/json"
	"testing"
)

// Only a streamed delta may wait for the reader's next frame: the lines
// that end a message, the result, the init and requests are read at once.
func TestOnlyDeltasMayWait(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}}`, true},
		{`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}}`, true},
		{`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}}`, true},
		{`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m"}}}`, false},
		{`{"type":"stream_event","event":{"type":"content_block_stop","index":0}}`, false},
		{`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"}}}`, false},
		{`{"type":"stream_event","event":{"type":"message_stop"}}`, false},
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"content_block_delta"}]}}`, false},
		{`{"type":"result","subtype":"success","result":"ok"}`, false},
		{`{"type":"control_request","request_id":"1","request":{"subtype":"can_use_tool"}}`, false},
		{`{"type":"system","subtype":"init"}`, false},
	} {
		var m wireMsg
		if err := json.Unmarshal([]byte(tc.line), &m); err != nil {
			t.Fatal(err)
		}
		if got := isDelta(m); got != tc.want {
			t.Errorf("isDelta(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
