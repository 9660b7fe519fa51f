package credproxy

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// warmer opens the proxy's first connection to the upstream ahead of the
// first request that needs it. A CLI talks to the proxy before its first
// model request: Claude Code probes its endpoint with a keyless HEAD some
// 150 ms before it, which the proxy answers itself. Run alone, that probe
// opened the CLI's connection to the vendor (DNS, TCP and TLS: two or
// more round trips), and its first request reused it; through the proxy
// the first request would pay for the connection instead. So the CLI's
// first connection to the proxy starts the upstream one, with no request
// on it: nothing reaches the vendor before the CLI sends a request with
// a key, and the request finds the connection open (or joins its dial).
//
// The warm connection goes to the first dial of the upstream's address
// only, and only while it is fresh (warmTTL): an idle connection the
// upstream may have closed must not carry a request the transport cannot
// retry. When an HTTP proxy applies to the upstream, or the caller brings
// its own transport, nothing is warmed.
type warmer struct {
	// addr is the host:port the transport dials for the upstream.
	addr string
	// dial opens a connection to addr as the transport would: TCP, and
	// TLS for an https upstream.
	dial func(ctx context.Context, addr string) (net.Conn, error)

	once sync.Once
	// done is closed when the warm dial has ended; it is open until
	// start runs.
	done chan struct{}

	// ttl is warmTTL when the warmer was made.
	ttl time.Duration

	mu      sync.Mutex
	started bool
	closed  bool
	claimed bool
	conn    net.Conn
	at      time.Time
}

// warmTTL is how long a warm connection waits for its request. Tests
// that change it do not run in parallel.
var warmTTL = 20 * time.Second

// newWarmer installs the warm connection's dial hooks in t, the proxy's
// own transport, for the upstream up. It returns nil, leaving t alone,
// when an HTTP proxy applies to the upstream.
func newWarmer(t *http.Transport, up *url.URL) *warmer {
	if t.Proxy != nil {
		if pu, err := t.Proxy(&http.Request{URL: up}); pu != nil || err != nil {
			return nil
		}
	}
	port := up.Port()
	if port == "" {
		port = "443"
		if up.Scheme == "http" {
			port = "80"
		}
	}
	w := &warmer{addr: net.JoinHostPort(up.Hostname(), port), ttl: warmTTL, done: make(chan struct{})}
	// The dialer of http.DefaultTransport.
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if up.Scheme == "http" {
		w.dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
		t.DialContext = w.hook
		return w
	}
	// With a TLS dial of its own the transport leaves TLS to it, so it
	// does what the transport would: its TLS configuration (which
	// offers HTTP/2 once the transport has set its protocols up, as
	// CloseIdleConnections does here), the server name, the handshake
	// timeout. The transport then speaks whichever protocol was agreed.
	t.CloseIdleConnections()
	base, timeout := t.TLSClientConfig, t.TLSHandshakeTimeout
	w.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		raw, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{}
		if base != nil {
			cfg = base.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		return tc, nil
	}
	t.DialTLSContext = w.hook
	return w
}

// hook is the transport's dial: the warm connection for the first dial of
// the upstream's address, a new one otherwise.
func (w *warmer) hook(ctx context.Context, _, addr string) (net.Conn, error) {
	if c := w.take(ctx, addr); c != nil {
		return c, nil
	}
	return w.dial(ctx, addr)
}

// start opens the warm connection in the background, once; ctx ends it.
func (w *warmer) start(ctx context.Context) {
	w.once.Do(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed {
			return
		}
		w.started = true
		go func() {
			defer close(w.done)
			c, err := w.dial(ctx, w.addr)
			if err != nil {
				// The first request dials again and reports what
				// went wrong.
				return
			}
			w.mu.Lock()
			w.conn, w.at = c, time.Now()
			w.mu.Unlock()
		}()
	})
}

// take hands the warm connection to the first dial of addr, waiting for a
// dial still under way; nil sends the caller to a dial of its own.
func (w *warmer) take(ctx context.Context, addr string) net.Conn {
	w.mu.Lock()
	if !w.started || w.claimed || addr != w.addr {
		w.mu.Unlock()
		return nil
	}
	w.claimed = true
	w.mu.Unlock()
	select {
	case <-w.done:
	case <-ctx.Done():
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.conn
	w.conn = nil
	if c != nil && time.Since(w.at) > w.ttl {
		_ = c.Close()
		return nil
	}
	return c
}

// close waits for a warm dial under way (its context must have ended) and
// closes a connection nobody took; no dial starts afterwards.
func (w *warmer) close() {
	w.mu.Lock()
	w.closed = true
	started := w.started
	w.mu.Unlock()
	if started {
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}
