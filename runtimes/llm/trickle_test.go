package llm

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/trickle"
)

// The body of an event stream reaches the SDKs through trickle, which
// reads a dense stream a frame apart; every other body is the transport's
// own. Either way the SDK reads every byte.
func TestEventStreamsAreReadThroughTrickle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			for i := range 50 {
				_, _ = fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	client := newHTTPClient(Config{})
	for _, tc := range []struct {
		path    string
		trickle bool
		want    string
	}{
		{"/stream", true, "data: {\"n\":49}\n\n"},
		{"/json", false, `{"ok":true}`},
	} {
		resp, err := client.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		_, wrapped := resp.Body.(trickle.ReadCloser)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if wrapped != tc.trickle {
			t.Errorf("%s: read through trickle %v, want %v", tc.path, wrapped, tc.trickle)
		}
		if !strings.HasSuffix(string(body), tc.want) {
			t.Errorf("%s: body ends %q", tc.path, body[max(0, len(body)-40):])
		}
	}
}
