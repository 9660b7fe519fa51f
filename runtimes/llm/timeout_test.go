package llm_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// TestRequestTimeoutBoundsTheWaitForHeaders: a server that accepts the
// request and never answers is given up after the configured timeout, per
// attempt, and the failure is one the failover chain may retry elsewhere.
func TestRequestTimeoutBoundsTheWaitForHeaders(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				// Reading the body lets the server notice the client
				// hanging up, which cancels r.Context().
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			}))
			defer silent.Close()
			cfg := llmtest.New(t, p).Config()
			cfg.BaseURL = silent.URL
			cfg.Timeout = 150 * time.Millisecond
			cfg.Retry.MaxAttempts = 2
			c, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.Stream(context.Background(), simpleReq(), func(llm.Delta) {})
			d := time.Since(start)
			if err == nil || !engine.KindOf(err).Retryable() {
				t.Fatalf("want a retryable error, got %v", err)
			}
			if d < 300*time.Millisecond || d > 3*time.Second {
				t.Errorf("two attempts of 150ms took %v", d)
			}
			if n := hits.Load(); n != 2 {
				t.Errorf("%d attempts, want 2", n)
			}
		})
	}
}
