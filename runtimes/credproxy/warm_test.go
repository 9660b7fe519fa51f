package credproxy

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// connUpstream is a fake vendor API that records the connections it
// accepts and closes, and the connection and protocol of each request.
type connUpstream struct {
	srv    *httptest.Server
	mu     sync.Mutex
	conns  []string
	closed map[string]bool
	reqs   []connReq
}

type connReq struct {
	remote string
	proto  int
	key    string
}

// newConnUpstream starts it over plain HTTP, or over TLS offering HTTP/2
// with handshake added to each TLS handshake (a far server's round
// trips).
func newConnUpstream(t testing.TB, overTLS bool, handshake time.Duration) *connUpstream {
	t.Helper()
	u := &connUpstream{closed: map[string]bool{}}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, connReq{remote: r.RemoteAddr, proto: r.ProtoMajor, key: r.Header.Get("X-Api-Key")})
		u.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	u.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		u.mu.Lock()
		defer u.mu.Unlock()
		switch s {
		case http.StateNew:
			u.conns = append(u.conns, c.RemoteAddr().String())
		case http.StateClosed, http.StateHijacked:
			u.closed[c.RemoteAddr().String()] = true
		}
	}
	if overTLS {
		u.srv.EnableHTTP2 = true
		u.srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			time.Sleep(handshake)
			return nil, nil
		}}
		u.srv.StartTLS()
	} else {
		u.srv.Start()
	}
	t.Cleanup(u.srv.Close)
	return u
}

// proxyConfig is a proxy's configuration for u, trusting its certificate.
func (u *connUpstream) proxyConfig() Config {
	cfg := Config{Upstream: u.srv.URL, Secrets: []string{realKey}}
	if c := u.srv.Certificate(); c != nil {
		pool := x509.NewCertPool()
		pool.AddCert(c)
		cfg.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return cfg
}

func (u *connUpstream) state() ([]string, []connReq, map[string]bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	closed := map[string]bool{}
	for k, v := range u.closed {
		closed[k] = v
	}
	return append([]string(nil), u.conns...), append([]connReq(nil), u.reqs...), closed
}

// waitFor polls cond for up to 3 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// probe is Claude Code's keyless HEAD, which the proxy answers itself.
func probe(t testing.TB, c *http.Client, p *Proxy) {
	t.Helper()
	resp, err := c.Head(p.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("probe: status %d", resp.StatusCode)
	}
}

// post sends a request with the placeholder, as the CLI's model request.
func post(t testing.TB, c *http.Client, p *Proxy) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.URL()+"/v1/messages", strings.NewReader(`{"stream":false}`))
	req.Header.Set("x-api-key", p.Placeholders()[0])
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post: status %d", resp.StatusCode)
	}
}

// probedClient starts a proxy for u and a client that has sent it the
// CLI's probe; the caller closes both.
func probedClient(t *testing.T, u *connUpstream) (*Proxy, *http.Client) {
	t.Helper()
	p, err := Start(u.proxyConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{}}
	probe(t, c, p)
	return p, c
}

// probedProxy is probedClient, closed at the test's end; it returns once
// the upstream has the warm connection (its TCP part: TLS may still be
// under way).
func probedProxy(t *testing.T, u *connUpstream) (*Proxy, *http.Client) {
	t.Helper()
	p, c := probedClient(t, u)
	t.Cleanup(func() {
		c.CloseIdleConnections()
		_ = p.Close()
	})
	waitFor(t, "the warm connection", func() bool { conns, _, _ := u.state(); return len(conns) == 1 })
	return p, c
}

// TestFirstRequestTakesTheWarmConnection: the CLI's first connection to
// the proxy opens one to the upstream, with no request on it (the probe
// stays with the proxy), and the first model request goes out on it: over
// plain HTTP, and over TLS in the protocol the transport agreed (HTTP/2
// where the upstream offers it), with the real key.
func TestFirstRequestTakesTheWarmConnection(t *testing.T) {
	for _, overTLS := range []bool{false, true} {
		up := newConnUpstream(t, overTLS, 0)
		p, c := probedClient(t, up)
		waitFor(t, "the warm connection", func() bool { conns, _, _ := up.state(); return len(conns) == 1 })
		if _, reqs, _ := up.state(); len(reqs) != 0 {
			t.Fatalf("tls %v: the probe reached the upstream: %v", overTLS, reqs)
		}
		post(t, c, p)
		conns, reqs, _ := up.state()
		if len(conns) != 1 || len(reqs) != 1 || reqs[0].remote != conns[0] || reqs[0].key != realKey {
			t.Errorf("tls %v: connections %v, requests %+v: want one request with the key on the warm connection", overTLS, conns, reqs)
		}
		if overTLS && reqs[0].proto != 2 {
			t.Errorf("the request over TLS spoke HTTP/%d, want 2", reqs[0].proto)
		}
		c.CloseIdleConnections()
		_ = p.Close()
	}
}

// TestFirstRequestJoinsTheWarmDial: a request that comes while the warm
// connection is still being opened (a slow TLS handshake) waits for it
// rather than opening a second one.
func TestFirstRequestJoinsTheWarmDial(t *testing.T) {
	up := newConnUpstream(t, true, 300*time.Millisecond)
	p, c := probedProxy(t, up)
	post(t, c, p)
	if conns, reqs, _ := up.state(); len(conns) != 1 || len(reqs) != 1 || reqs[0].remote != conns[0] {
		t.Errorf("connections %v, requests %+v: want the request on the one warm connection", conns, reqs)
	}
}

// TestStaleWarmConnectionIsNotUsed: a warm connection older than warmTTL
// is closed rather than given a request the transport could not retry if
// the upstream had dropped it. Not parallel: it changes warmTTL.
func TestStaleWarmConnectionIsNotUsed(t *testing.T) {
	defer func(d time.Duration) { warmTTL = d }(warmTTL)
	warmTTL = time.Millisecond
	up := newConnUpstream(t, false, 0)
	p, c := probedProxy(t, up)
	time.Sleep(5 * time.Millisecond)
	post(t, c, p)
	conns, reqs, _ := up.state()
	if len(conns) != 2 || len(reqs) != 1 || reqs[0].remote != conns[1] {
		t.Fatalf("connections %v, requests %+v: want the request on a new connection", conns, reqs)
	}
	waitFor(t, "the stale connection to close", func() bool { _, _, closed := up.state(); return closed[conns[0]] })
}

// TestUnusedWarmConnectionClosesWithTheProxy: a CLI that never sends a
// request leaves no connection open upstream and no goroutine behind once
// the proxy closes, and a proxy closed before any CLI connected opens
// none.
func TestUnusedWarmConnectionClosesWithTheProxy(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	up := newConnUpstream(t, true, 0)
	p, c := probedClient(t, up)
	// Open: its TLS handshake done, waiting for a request.
	waitFor(t, "the warm connection", func() bool {
		p.warm.mu.Lock()
		defer p.warm.mu.Unlock()
		return p.warm.conn != nil
	})
	c.CloseIdleConnections()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	conns, _, _ := up.state()
	waitFor(t, "the warm connection to close", func() bool { _, _, closed := up.state(); return closed[conns[0]] })

	quiet, err := Start(up.proxyConfig())
	if err != nil {
		t.Fatal(err)
	}
	_ = quiet.Close()
	if conns, _, _ := up.state(); len(conns) != 1 {
		t.Errorf("a proxy nobody used connected upstream: %v", conns)
	}
	up.srv.Close()
}

// TestNothingWarmedThroughAnHTTPProxy: where an HTTP proxy carries the
// upstream's traffic (HTTPS_PROXY), the transport's own dialing is left
// as it is: no warm connection.
func TestNothingWarmedThroughAnHTTPProxy(t *testing.T) {
	up, _ := url.Parse("https://api.vendor.example/v1")
	tr := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) { return url.Parse("http://127.0.0.1:3128") }}
	if w := newWarmer(tr, up); w != nil || tr.DialContext != nil || tr.DialTLSContext != nil {
		t.Errorf("warmer %v made through an HTTP proxy", w)
	}
	tr = &http.Transport{}
	if w := newWarmer(tr, up); w == nil || w.addr != "api.vendor.example:443" || tr.DialTLSContext == nil {
		t.Errorf("warmer %+v without a proxy", w)
	}
}
