package credproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/internal/childenv"
)

// The real keys of these tests: distinctive, so that a leak anywhere is
// found by a plain substring search.
const (
	realKey   = "sk-REAL-KEY-must-never-leave-kz-0123456789"
	realToken = "REAL-BEARER-TOKEN-must-never-leave-kz-9876"
)

// seen is what the fake upstream received.
type seen struct {
	Method, Path, RawQuery, Host string
	Header                       http.Header
	Body                         []byte
	ContentLength                int64
}

// upstream is a fake vendor API that records requests and answers 200,
// streaming when the path ends in /stream.
type upstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []seen
	// release unblocks a streaming response after its first event.
	release chan struct{}
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{release: make(chan struct{})}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, seen{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host, Header: r.Header.Clone(),
			Body: body, ContentLength: r.ContentLength})
		u.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: first\ndata: {}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, "event: last\ndata: {}\n\n")
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.got...)
}

// logBuf collects every log line of a test, to check that no key is in it.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startProxy(t *testing.T, up string, secrets ...string) (*Proxy, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	p, err := Start(Config{Upstream: up, Secrets: secrets, Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Close()
		if s := lb.String(); strings.Contains(s, realKey) || strings.Contains(s, realToken) {
			t.Errorf("a real key is in the proxy's log:\n%s", s)
		}
	})
	return p, lb
}

// rawRequest sends request text as is over TCP to addr (so that forms a
// Go client would never send can be tried) and returns the status code.
func rawRequest(t *testing.T, addr, request string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestProxyCredentialSwap is the class "only a placeholder gets through,
// and only as the real key": every place a vendor takes its key from,
// right and wrong tokens, and requests that would make the proxy an open
// relay.
func TestProxyCredentialSwap(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, _ := startProxy(t, up.srv.URL+"/v1", realKey, realToken)
	phKey, phTok := p.Placeholders()[0], p.Placeholders()[1]
	other, _ := startProxy(t, up.srv.URL+"/v1", realKey)
	phOther := other.Placeholders()[0]

	type check func(t *testing.T, s seen)
	wantHeader := func(h, v string) check {
		return func(t *testing.T, s seen) {
			if got := s.Header.Values(h); len(got) != 1 || got[0] != v {
				t.Errorf("upstream %s = %q, want %q", h, got, v)
			}
		}
	}
	wantQuery := func(k, v string) check {
		return func(t *testing.T, s seen) {
			q, _ := url.ParseQuery(s.RawQuery)
			if got := q[k]; len(got) != 1 || got[0] != v {
				t.Errorf("upstream query %s = %q, want %q (raw %q)", k, got, v, s.RawQuery)
			}
		}
	}
	cases := []struct {
		name   string
		path   string
		header map[string]string
		status int
		checks []check
	}{
		{"x-api-key placeholder becomes the key", "/v1/messages", map[string]string{"x-api-key": phKey}, 200,
			[]check{wantHeader("X-Api-Key", realKey)}},
		{"bearer placeholder becomes the token", "/v1/responses", map[string]string{"Authorization": "Bearer " + phTok}, 200,
			[]check{wantHeader("Authorization", "Bearer "+realToken)}},
		{"bearer scheme in lower case", "/v1/responses", map[string]string{"Authorization": "bearer " + phKey}, 200,
			[]check{wantHeader("Authorization", "Bearer "+realKey)}},
		{"x-goog-api-key placeholder", "/v1/models/m:streamGenerateContent", map[string]string{"x-goog-api-key": phKey}, 200,
			[]check{wantHeader("X-Goog-Api-Key", realKey)}},
		{"key query parameter", "/v1/models/m:generateContent?alt=sse&key=" + phKey, nil, 200,
			[]check{wantQuery("key", realKey), wantQuery("alt", "sse")}},
		{"two credentials in two places", "/v1/messages", map[string]string{"x-api-key": phKey, "Authorization": "Bearer " + phTok}, 200,
			[]check{wantHeader("X-Api-Key", realKey), wantHeader("Authorization", "Bearer "+realToken)}},
		{"the upstream path itself", "/v1", map[string]string{"x-api-key": phKey}, 200, nil},
		{"no credential at all", "/v1/messages", nil, 401, nil},
		{"a wrong token", "/v1/messages", map[string]string{"x-api-key": "kz-proxy-00000000000000000000000000000000"}, 401, nil},
		{"the real key is not a placeholder", "/v1/messages", map[string]string{"x-api-key": realKey}, 401, nil},
		{"another proxy's placeholder", "/v1/messages", map[string]string{"x-api-key": phOther}, 401, nil},
		{"placeholder with a suffix", "/v1/messages", map[string]string{"x-api-key": phKey + "x"}, 401, nil},
		{"placeholder prefix only", "/v1/messages", map[string]string{"x-api-key": phKey[:len(phKey)-1]}, 401, nil},
		{"a foreign key beside the placeholder", "/v1/messages", map[string]string{"x-api-key": phKey, "Authorization": "Bearer sk-someone-else"}, 401, nil},
		{"basic authorization", "/v1/messages", map[string]string{"Authorization": "Basic " + phKey}, 401, nil},
		{"a wrong query key", "/v1/models/m:generateContent?key=nope", nil, 401, nil},
		{"a path outside the endpoint's API", "/v2/admin", map[string]string{"x-api-key": phKey}, 404, nil},
		{"a path that only shares a prefix", "/v1beta/models", map[string]string{"x-api-key": phKey}, 404, nil},
		{"a HEAD with a wrong key", "/v1", map[string]string{"x-api-key": "nope"}, 401, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(up.requests())
			method, reqBody := http.MethodPost, io.Reader(strings.NewReader(`{}`))
			if strings.HasPrefix(tc.name, "a HEAD") {
				method, reqBody = http.MethodHead, nil
			}
			req, err := http.NewRequest(method, "http://"+p.addr+tc.path, reqBody)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			got := up.requests()[before:]
			if tc.status != 200 {
				if len(got) != 0 {
					t.Fatalf("a refused request reached the upstream: %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("upstream got %d requests", len(got))
			}
			s := got[0]
			if want, _, _ := strings.Cut(tc.path, "?"); s.Path != want {
				t.Errorf("upstream path %q, want %q", s.Path, want)
			}
			if s.Host != up.srv.Listener.Addr().String() {
				t.Errorf("upstream Host %q", s.Host)
			}
			if strings.Contains(fmt.Sprint(s.Header, s.RawQuery), PlaceholderPrefix) {
				t.Errorf("a placeholder reached the upstream: %v %s", s.Header, s.RawQuery)
			}
			for _, c := range tc.checks {
				c(t, s)
			}
		})
	}
}

// TestProxyAnswersBareHead: the HEAD probe Claude Code sends before its
// first request, without a key, is answered by the proxy and goes nowhere.
func TestProxyAnswersBareHead(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, _ := startProxy(t, up.srv.URL, realKey)
	resp, err := http.Head(p.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(up.requests()) != 0 {
		t.Fatalf("status %d, %d upstream requests", resp.StatusCode, len(up.requests()))
	}
}

// TestProxyBodies: request bodies reach the upstream whole, a streamed
// (chunked) one too, and a body-less request stays body-less.
func TestProxyBodies(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, _ := startProxy(t, up.srv.URL, realKey)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for _, tc := range []struct {
		name   string
		method string
		body   io.Reader
		want   []byte
	}{
		{"a JSON body", http.MethodPost, strings.NewReader(`{"model":"m"}`), []byte(`{"model":"m"}`)},
		{"a chunked body of 1 MiB", http.MethodPost, io.MultiReader(bytes.NewReader(big)), big},
		{"no body", http.MethodGet, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(up.requests())
			req, _ := http.NewRequest(tc.method, p.URL()+"/v1/messages", tc.body)
			req.Header.Set("x-api-key", p.Placeholders()[0])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			got := up.requests()[before:]
			if resp.StatusCode != 200 || len(got) != 1 {
				t.Fatalf("status %d, %d upstream requests", resp.StatusCode, len(got))
			}
			if !bytes.Equal(got[0].Body, tc.want) || got[0].ContentLength != int64(len(tc.want)) {
				t.Errorf("upstream body %d bytes (Content-Length %d), want %d", len(got[0].Body), got[0].ContentLength, len(tc.want))
			}
		})
	}
}

// TestProxyNoRelay is the class "no open relay": request forms that name
// another host, or the proxy by another name, are refused before any
// credential is looked at, and nothing reaches any upstream.
func TestProxyNoRelay(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, _ := startProxy(t, up.srv.URL, realKey)
	ph := p.Placeholders()[0]
	elsewhere := newUpstream(t)
	cases := []struct {
		name    string
		request string
		status  int
	}{
		{"absolute URL to another host",
			"GET " + elsewhere.srv.URL + "/v1/messages HTTP/1.1\r\nHost: " + elsewhere.srv.Listener.Addr().String() + "\r\nx-api-key: " + ph + "\r\n\r\n", 405},
		{"CONNECT tunnel", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nx-api-key: " + ph + "\r\n\r\n", 405},
		{"another Host header (DNS rebinding)", "GET /v1/messages HTTP/1.1\r\nHost: attacker.example\r\nx-api-key: " + ph + "\r\n\r\n", 421},
		{"localhost is not the proxy's name", "GET /v1/messages HTTP/1.1\r\nHost: localhost:" + portOf(p.addr) + "\r\nx-api-key: " + ph + "\r\n\r\n", 421},
		{"dot segments climbing out", "GET /v1/../../admin HTTP/1.1\r\nHost: " + p.addr + "\r\nx-api-key: " + ph + "\r\n\r\n", 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rawRequest(t, p.addr, tc.request); got != tc.status {
				t.Fatalf("status %d, want %d", got, tc.status)
			}
			if n := len(up.requests()) + len(elsewhere.requests()); n != 0 {
				t.Fatalf("%d requests reached an upstream", n)
			}
		})
	}
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// TestProxyStreams: an event the upstream flushes reaches the client while
// the upstream is still writing, so a CLI sees tokens as they come.
func TestProxyStreams(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, _ := startProxy(t, up.srv.URL, realKey)
	req, _ := http.NewRequest(http.MethodPost, p.URL()+"/v1/stream", strings.NewReader(`{}`))
	req.Header.Set("x-api-key", p.Placeholders()[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	br := bufio.NewReader(resp.Body)
	// The upstream holds its last event until release is closed: reading
	// the first one before that proves the proxy does not buffer.
	line, err := br.ReadString('\n')
	if err != nil || line != "event: first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(up.release)
	rest, err := io.ReadAll(br)
	if err != nil || !strings.Contains(string(rest), "event: last") {
		t.Fatalf("rest %q, %v", rest, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
}

// failing is a transport whose error quotes the request URL, as
// *url.Error does in http.Client and many transports.
type failing struct{}

func (failing) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, &url.Error{Op: r.Method, URL: r.URL.String(), Err: errors.New("no route to the vendor")}
}

// TestProxyUpstreamErrorRedacted: when the upstream cannot be reached the
// error says what failed, but neither the answer nor the log holds the
// key, not even where the key travelled in the URL's query.
func TestProxyUpstreamErrorRedacted(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	deadProxy, deadLog := startProxy(t, dead, realKey)
	lb := &logBuf{}
	quoting, err := Start(Config{Upstream: "https://generativelanguage.example", Secrets: []string{realKey}, Transport: failing{},
		Logger: slog.New(slog.NewTextHandler(lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = quoting.Close() }()
	for _, tc := range []struct {
		p    *Proxy
		log  *logBuf
		want string
	}{{deadProxy, deadLog, "connection refused"}, {quoting, lb, "key=[redacted]"}} {
		resp, err := http.Get(tc.p.URL() + "/v1beta/models/m:generateContent?key=" + tc.p.Placeholders()[0])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if strings.Contains(string(body), realKey) || strings.Contains(tc.log.String(), realKey) {
			t.Fatalf("the key leaked in an upstream error:\nbody %s\nlog %s", body, tc.log.String())
		}
		if !strings.Contains(string(body), "upstream failed") || !strings.Contains(tc.log.String(), "upstream failed") {
			t.Errorf("the error does not say what failed:\nbody %s\nlog %s", body, tc.log.String())
		}
		if !strings.Contains(string(body)+tc.log.String(), tc.want) {
			t.Errorf("want %q in the error:\nbody %s\nlog %s", tc.want, body, tc.log.String())
		}
	}
}

// TestProxyCloseEndsEverything: Close ends a response still streaming and
// an upgraded (WebSocket) connection, refuses new connections, and leaves
// no goroutine behind.
func TestProxyCloseEndsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	up := newUpstream(t)
	upgrades := httptest.NewServer(http.HandlerFunc(echoUpgrade))
	defer upgrades.Close()
	defer up.srv.Close()

	p, err := Start(Config{Upstream: up.srv.URL, Secrets: []string{realKey}})
	if err != nil {
		t.Fatal(err)
	}
	ph := p.Placeholders()[0]
	req, _ := http.NewRequest(http.MethodPost, p.URL()+"/stream", nil)
	req.Header.Set("x-api-key", ph)
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}

	wsProxy, err := Start(Config{Upstream: upgrades.URL, Secrets: []string{realKey}})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := net.Dial("tcp", wsProxy.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.Close() }()
	_, _ = fmt.Fprintf(ws, "GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nAuthorization: Bearer %s\r\n\r\n",
		wsProxy.addr, wsProxy.Placeholders()[0])
	wr := bufio.NewReader(ws)
	up101, err := http.ReadResponse(wr, nil)
	if err != nil || up101.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", up101, err)
	}
	_, _ = io.WriteString(ws, "ping\n")
	if l, err := wr.ReadString('\n'); err != nil || l != "ping\n" {
		t.Fatalf("echo over the upgraded connection: %q %v", l, err)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := wsProxy.Close(); err != nil {
		t.Fatal(err)
	}
	// The stream ends (with an error or EOF), it does not hang.
	_, _ = io.ReadAll(br)
	_ = resp.Body.Close()
	// The upgraded connection is closed by the proxy.
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := wr.ReadString('\n'); err == nil {
		t.Fatal("the upgraded connection is still open after Close")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the upgraded connection is still open after Close (read timed out)")
	}
	if _, err := net.Dial("tcp", p.addr); err == nil {
		t.Fatal("the proxy still accepts connections after Close")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	client.CloseIdleConnections()
}

// echoUpgrade switches protocols and echoes lines, standing in for a
// WebSocket endpoint (Codex opens its Responses stream as one).
func echoUpgrade(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+realKey {
		http.Error(w, "bad key", http.StatusUnauthorized)
		return
	}
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer func() { _ = c.Close() }()
	_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
	_ = rw.Flush()
	for {
		l, err := rw.ReadString('\n')
		if err != nil {
			return
		}
		_, _ = rw.WriteString(l)
		_ = rw.Flush()
	}
}

// TestProxyRejectsBadConfig: an upstream that is not an http(s) base URL,
// or no credential, is an error before anything listens.
func TestProxyRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, up := range []string{"", "api.anthropic.com", "ftp://x", "https://", "https://u:p@x", "https://x/?key=1", "https://x/#f"} {
		if p, err := Start(Config{Upstream: up, Secrets: []string{realKey}}); err == nil {
			_ = p.Close()
			t.Errorf("upstream %q accepted", up)
		}
	}
	if p, err := Start(Config{Upstream: "https://x"}); err == nil {
		_ = p.Close()
		t.Error("no secret accepted")
	}
	if p, err := Start(Config{Upstream: "https://x", Secrets: []string{""}}); err == nil {
		_ = p.Close()
		t.Error("an empty secret accepted")
	}
}

// TestShieldEnv: the environment a CLI gets holds placeholders and the
// proxy's URL, never the key; without a key nothing is proxied.
func TestShieldEnv(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	spec := Spec{KeyVars: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}, BaseURLVar: "ANTHROPIC_BASE_URL", DefaultUpstream: "https://api.anthropic.com"}

	env, p, err := Shield([]string{"HOME=/h", "ANTHROPIC_AUTH_TOKEN="}, spec, nil)
	if err != nil || p != nil || len(env) != 2 {
		t.Fatalf("no key: env %q proxy %v err %v", env, p, err)
	}

	in := []string{"HOME=/h", "ANTHROPIC_API_KEY=old", "ANTHROPIC_API_KEY=" + realKey, "ANTHROPIC_AUTH_TOKEN=" + realToken, "ANTHROPIC_BASE_URL=https://gw.example/anthropic"}
	env, p, err = Shield(in, spec, nil)
	if err != nil || p == nil {
		t.Fatalf("shield: %v", err)
	}
	defer func() { _ = p.Close() }()
	joined := strings.Join(env, "\n")
	for _, bad := range []string{realKey, realToken, "=old", "gw.example"} {
		if strings.Contains(joined, bad) {
			t.Errorf("the shielded env holds %q:\n%s", bad, joined)
		}
	}
	if got := childenv.Lookup(env, "ANTHROPIC_API_KEY"); got != p.Placeholders()[0] || !strings.HasPrefix(got, PlaceholderPrefix) {
		t.Errorf("ANTHROPIC_API_KEY=%q", got)
	}
	if got := childenv.Lookup(env, "ANTHROPIC_AUTH_TOKEN"); got != p.Placeholders()[1] {
		t.Errorf("ANTHROPIC_AUTH_TOKEN=%q", got)
	}
	if got := childenv.Lookup(env, "ANTHROPIC_BASE_URL"); got != p.URL() || !strings.HasPrefix(got, "http://127.0.0.1:") || !strings.HasSuffix(got, "/anthropic") {
		t.Errorf("ANTHROPIC_BASE_URL=%q", got)
	}
	if p.Upstream() != "https://gw.example/anthropic" {
		t.Errorf("upstream %q", p.Upstream())
	}
	if childenv.Lookup(env, "HOME") != "/h" {
		t.Error("other variables are lost")
	}
	if got := childenv.Strip(in, "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"); strings.Contains(strings.Join(got, " "), "sk-") {
		t.Errorf("Strip left a key: %q", got)
	}
}

// TestPlaceholdersDiffer: every proxy and every secret gets its own
// placeholder.
func TestPlaceholdersDiffer(t *testing.T) {
	t.Parallel()
	seenPH := map[string]bool{}
	for range 5 {
		p, err := Start(Config{Upstream: "https://x", Secrets: []string{realKey, realKey}})
		if err != nil {
			t.Fatal(err)
		}
		for _, ph := range p.Placeholders() {
			if seenPH[ph] || len(ph) < len(PlaceholderPrefix)+32 {
				t.Errorf("placeholder %q repeated or short", ph)
			}
			seenPH[ph] = true
		}
		_ = p.Close()
	}
}

// TestProxyContextCancel: a client that gives up ends the upstream
// request too (the handler returns), so nothing waits on a dead stream.
func TestProxyContextCancel(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, _ := startProxy(t, up.srv.URL, realKey)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL()+"/stream", nil)
	req.Header.Set("x-api-key", p.Placeholders()[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	_ = resp.Body.Close()
	// Close waits for every handler: it returns only if the cancelled
	// request's handler has ended.
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
