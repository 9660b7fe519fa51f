package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestWebSearchInput (class: bad queries): a query that is empty, too
// long, holds control characters or extra fields, or meets a runtime with
// no search, is refused before the gate with the reason.
func TestWebSearchInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"query":"   "}`: "query is empty",
		`{"query":"` + strings.Repeat("a", 501) + `"}`: "limit is 500",
		`{"query":"a\u0000b"}`:                         "control characters",
		`{"query":"a","n":3}`:                          "unknown field",
		`{"query":"go 1.26"}`:                          "no web search",
	} {
		if _, err := (WebSearch{}).Prepare(context.Background(), nil, json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", in, err, want)
		}
	}
	if got := oneLine("A title\n\twith\r\nbreaks\x00"); got != "A title with breaks" {
		t.Errorf("oneLine: %q", got)
	}
}
