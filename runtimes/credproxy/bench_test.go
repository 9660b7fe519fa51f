package credproxy

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sseUpstream streams events SSE frames, flushing each, like a model
// answering token by token.
func sseUpstream(events int) *httptest.Server {
	frame := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" +
		strings.Repeat("x", 40) + "\"}}\n\n"
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range events {
			_, _ = io.WriteString(w, frame)
			f.Flush()
		}
	}))
}

// streamOnce posts a request and reads the stream to its end. It returns
// the time to the first event.
func streamOnce(b *testing.B, c *http.Client, url, key string) time.Duration {
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages", strings.NewReader(`{"stream":true}`))
	req.Header.Set("x-api-key", key)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	if _, err := io.Copy(io.Discard, br); err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
	return first
}

// BenchmarkStream compares a streamed response of 200 events read
// directly from the upstream and through the proxy (keep-alive on both
// legs, as a CLI's client and the proxy's transport keep them). ns/op is
// the whole stream; first-event-ns the time to its first event.
func BenchmarkStream(b *testing.B) {
	up := sseUpstream(200)
	defer up.Close()
	p, err := Start(Config{Upstream: up.URL, Secrets: []string{realKey}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	for _, tc := range []struct {
		name, url, key string
	}{{"direct", up.URL, realKey}, {"proxied", p.URL(), p.Placeholders()[0]}} {
		b.Run(tc.name, func(b *testing.B) {
			c := &http.Client{Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			var first time.Duration
			for b.Loop() {
				first += streamOnce(b, c, tc.url, tc.key)
			}
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-event-ns")
		})
	}
}

// BenchmarkRefuse is the cost of turning away a request with a wrong
// placeholder (no upstream round trip).
func BenchmarkRefuse(b *testing.B) {
	p, err := Start(Config{Upstream: "http://127.0.0.1:9", Secrets: []string{realKey}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, p.URL()+"/v1/messages", nil)
		req.Header.Set("x-api-key", "kz-proxy-wrong")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			b.Fatal(fmt.Sprint(resp.StatusCode))
		}
	}
}

// BenchmarkFirstRequest is a CLI's first model request through a fresh
// proxy to an upstream whose TLS handshake takes 20 ms more (a server a
// few round trips away). "probed" is Claude Code's start: a keyless probe
// to its endpoint, then the request 50 ms later, by which time the proxy
// has opened the upstream connection; "unprobed" sends the request first,
// which pays for the connection as every first request did before the
// warm connection. first-request-ms is the request's own time.
func BenchmarkFirstRequest(b *testing.B) {
	for _, probed := range []bool{true, false} {
		name := "unprobed"
		if probed {
			name = "probed"
		}
		b.Run(name, func(b *testing.B) {
			up := newConnUpstream(b, true, 20*time.Millisecond)
			var total time.Duration
			for b.Loop() {
				p, err := Start(up.proxyConfig())
				if err != nil {
					b.Fatal(err)
				}
				c := &http.Client{Transport: &http.Transport{}}
				if probed {
					probe(b, c, p)
					time.Sleep(50 * time.Millisecond)
				}
				start := time.Now()
				post(b, c, p)
				total += time.Since(start)
				c.CloseIdleConnections()
				_ = p.Close()
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "first-request-ms")
		})
	}
}
