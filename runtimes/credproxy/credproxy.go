// Package credproxy keeps kz's provider keys out of the agent CLIs it
// drives. A CLI gets the URL of a loopback reverse proxy as its endpoint
// and a random placeholder as its key; the proxy accepts only requests
// that carry one of its placeholders, puts the real key in its place and
// forwards the request to the real endpoint. Neither the CLI's environment
// nor the environment of the commands its shell tool runs then holds a
// key: `printenv` shows a placeholder that works only on 127.0.0.1, only
// for the endpoint's API paths, and only while the proxy lives.
package credproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// PlaceholderPrefix starts every placeholder, so that a person who finds
// one in a CLI's environment can tell what it is.
const PlaceholderPrefix = "kz-proxy-"

// The places a vendor's API takes its key from. Anthropic reads x-api-key
// (an API key) or Authorization: Bearer (an auth or OAuth token), OpenAI
// and OpenAI-compatible gateways Authorization: Bearer, Google
// x-goog-api-key or the key query parameter.
const (
	headerAPIKey     = "X-Api-Key"
	headerAuth       = "Authorization"
	headerGoogAPIKey = "X-Goog-Api-Key"
	queryKey         = "key"
)

// Config configures one proxy.
type Config struct {
	// Upstream is the real endpoint's base URL, e.g.
	// "https://api.anthropic.com" or "https://api.openai.com/v1". Requests
	// are forwarded to its scheme and host; only paths under its path are
	// accepted, so a placeholder cannot reach other APIs of the same host.
	Upstream string
	// Secrets are the real credentials. Each gets its own placeholder (a
	// CLI may send two, such as Claude's x-api-key and its bearer token).
	Secrets []string
	// Logger receives what the proxy refuses and upstream failures, never
	// a key. Nil means slog.Default().
	Logger *slog.Logger
	// Transport carries requests upstream. Nil means a copy of
	// http.DefaultTransport (which honours HTTPS_PROXY), owned and closed
	// by the proxy, which opens its first upstream connection ahead of
	// the first request (warm.go).
	Transport http.RoundTripper
	// TLSClientConfig is the TLS configuration of the proxy's own
	// transport for an https upstream; nil means Go's defaults (the
	// system's roots). It is ignored with a Transport of the caller's.
	TLSClientConfig *tls.Config
}

// Proxy is one running credential proxy on 127.0.0.1.
type Proxy struct {
	upstream *url.URL
	// prefix is the upstream's path without its trailing slash; accepted
	// request paths are prefix itself or start with prefix + "/".
	prefix string
	addr   string
	// secrets maps each placeholder to its real credential; placeholders
	// keeps the placeholders in the order of Config.Secrets.
	secrets      map[string]string
	placeholders []string
	log          *slog.Logger

	ln        net.Listener
	srv       *http.Server
	rp        *httputil.ReverseProxy
	transport *http.Transport
	// warm opens the first upstream connection when the CLI first
	// connects (warm.go); nil when the transport is the caller's or an
	// HTTP proxy applies.
	warm *warmer
	// cancel ends the base context of every request, which also ends
	// upgraded (WebSocket) connections that http.Server.Close does not
	// track.
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup
	served   chan struct{}
	once     sync.Once
}

// Start listens on a free port of 127.0.0.1 and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	up, err := parseUpstream(cfg.Upstream)
	if err != nil {
		return nil, err
	}
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("credential proxy: no credential to proxy")
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	p := &Proxy{upstream: up, prefix: strings.TrimSuffix(up.Path, "/"), secrets: map[string]string{},
		log: lg.With("component", "credproxy"), served: make(chan struct{})}
	for _, s := range cfg.Secrets {
		if s == "" {
			return nil, errors.New("credential proxy: an empty credential")
		}
		ph, err := newPlaceholder()
		if err != nil {
			return nil, err
		}
		p.secrets[ph] = s
		p.placeholders = append(p.placeholders, ph)
	}
	rt := cfg.Transport
	if rt == nil {
		p.transport = http.DefaultTransport.(*http.Transport).Clone()
		if cfg.TLSClientConfig != nil {
			p.transport.TLSClientConfig = cfg.TLSClientConfig.Clone()
		}
		p.warm = newWarmer(p.transport, up)
		rt = p.transport
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: p.rewrite,
		// Server-sent events and streamed JSON go to the CLI as they
		// arrive: a buffered token stream would stall the CLI's output.
		FlushInterval: -1,
		Transport:     rt,
		ErrorHandler:  p.upstreamError,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("credential proxy: listen on 127.0.0.1: %w", err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serve),
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// The server's own messages can quote a request line, which may
		// hold a placeholder in its query: they are dropped.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	if p.warm != nil {
		p.srv.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				p.warm.start(ctx)
			}
		}
	}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// parseUpstream checks that the upstream is an absolute http(s) URL
// without credentials, query or fragment of its own.
func parseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("credential proxy: upstream: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("credential proxy: upstream %q: want an http or https URL", u.Redacted())
	case u.Host == "":
		return nil, fmt.Errorf("credential proxy: upstream %q has no host", u.Redacted())
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return nil, fmt.Errorf("credential proxy: upstream %q: user info, query and fragment are not supported", u.Redacted())
	}
	return u, nil
}

// newPlaceholder returns a fresh random placeholder credential.
func newPlaceholder() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("credential proxy: placeholder: %w", err)
	}
	return PlaceholderPrefix + hex.EncodeToString(b[:]), nil
}

// URL is the base URL the CLI gets: the proxy's origin followed by the
// upstream's path, so that the CLI appends its API paths as it would to
// the real endpoint.
func (p *Proxy) URL() string { return "http://" + p.addr + p.prefix }

// Placeholders returns the placeholder of each secret, in the order of
// Config.Secrets.
func (p *Proxy) Placeholders() []string { return append([]string(nil), p.placeholders...) }

// Upstream is the endpoint requests are forwarded to.
func (p *Proxy) Upstream() string { return p.upstream.String() }

// Close stops the proxy: it refuses new requests, ends the open ones,
// waits for their handlers and closes the upstream connections. It is safe
// to call more than once.
func (p *Proxy) Close() error {
	var err error
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		err = p.srv.Close()
		p.cancel()
		<-p.served
		p.handlers.Wait()
		if p.warm != nil {
			p.warm.close()
		}
		if p.transport != nil {
			p.transport.CloseIdleConnections()
		}
	})
	if err != nil {
		return fmt.Errorf("credential proxy: close: %w", err)
	}
	return nil
}

// serve checks a request and hands it to the reverse proxy.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		refuse(w, http.StatusServiceUnavailable, "the proxy is closing")
		return
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()

	// Only origin-form requests addressed to the proxy itself: an
	// absolute URL or CONNECT would ask for a relay to another host, and
	// another Host header is what a DNS-rebinding web page sends.
	if r.Method == http.MethodConnect || r.URL.Host != "" || r.URL.Scheme != "" {
		p.refused(w, r, http.StatusMethodNotAllowed, "the proxy only forwards to its endpoint")
		return
	}
	if r.Host != p.addr {
		p.refused(w, r, http.StatusMisdirectedRequest, "wrong host")
		return
	}
	if !p.underPrefix(r.URL.Path) {
		p.refused(w, r, http.StatusNotFound, "path outside the endpoint's API")
		return
	}
	// Claude Code probes its endpoint with a HEAD that carries no key
	// before its first request. The proxy answers it itself: the probe
	// learns that the endpoint is there, and nothing goes upstream
	// without a key.
	if r.Method == http.MethodHead && !carriesCredential(r) {
		w.WriteHeader(http.StatusOK)
		return
	}
	if !p.swapCredentials(r) {
		p.refused(w, r, http.StatusUnauthorized, "missing or wrong placeholder credential")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		p.log.Debug("credential proxy: reading a request body", "path", r.URL.Path, "err", err)
		refuse(w, http.StatusBadRequest, "could not read the request body")
		return
	}
	if len(body) > maxBody {
		p.refused(w, r, http.StatusRequestEntityTooLarge, "request body too large")
		return
	}
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, body)))
}

// maxBody bounds a request body the proxy holds in memory. The vendors'
// own limits are lower (Anthropic's is 32 MB).
const maxBody = 64 << 20

// bodyKey carries a request's buffered body from serve to rewrite.
type bodyKey struct{}

// underPrefix reports whether path is the upstream's path or below it,
// with no dot segment that could climb out of it upstream.
func (p *Proxy) underPrefix(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	if p.prefix == "" {
		return true
	}
	return path == p.prefix || strings.HasPrefix(path, p.prefix+"/")
}

// swapCredentials checks every place a key can travel in and replaces
// each placeholder with its secret. It reports false, changing nothing
// that is forwarded, when no place holds a placeholder or any non-empty
// one holds something else: a request with a foreign key is not relayed.
func (p *Proxy) swapCredentials(r *http.Request) bool {
	found := false
	swapAll := func(vals []string, strip func(string) (string, bool), wrap func(string) string) ([]string, bool) {
		out := make([]string, 0, len(vals))
		for _, v := range vals {
			if v == "" {
				out = append(out, v)
				continue
			}
			tok, ok := strip(v)
			if !ok {
				return nil, false
			}
			s, ok := p.lookup(tok)
			if !ok {
				return nil, false
			}
			found = true
			out = append(out, wrap(s))
		}
		return out, true
	}
	plain := func(v string) (string, bool) { return v, true }
	same := func(s string) string { return s }
	bearer := func(v string) (string, bool) {
		scheme, tok, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", false
		}
		return strings.TrimSpace(tok), true
	}
	headers := map[string][]string{}
	for _, h := range []string{headerAPIKey, headerGoogAPIKey} {
		if vals := r.Header.Values(h); len(vals) > 0 {
			out, ok := swapAll(vals, plain, same)
			if !ok {
				return false
			}
			headers[h] = out
		}
	}
	if vals := r.Header.Values(headerAuth); len(vals) > 0 {
		out, ok := swapAll(vals, bearer, func(s string) string { return "Bearer " + s })
		if !ok {
			return false
		}
		headers[headerAuth] = out
	}
	var query url.Values
	if r.URL.RawQuery != "" {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return false
		}
		if vals := q[queryKey]; len(vals) > 0 {
			out, ok := swapAll(vals, plain, same)
			if !ok {
				return false
			}
			q[queryKey] = out
			query = q
		}
	}
	if !found {
		return false
	}
	for h, vals := range headers {
		r.Header[h] = vals
	}
	if query != nil {
		r.URL.RawQuery = query.Encode()
	}
	return true
}

// carriesCredential reports whether any place a key can travel in holds
// something.
func carriesCredential(r *http.Request) bool {
	for _, h := range []string{headerAPIKey, headerGoogAPIKey, headerAuth} {
		for _, v := range r.Header.Values(h) {
			if v != "" {
				return true
			}
		}
	}
	return r.URL.Query().Get(queryKey) != ""
}

// lookup returns the secret of a placeholder. Every placeholder is
// compared in constant time, so timing does not tell how much of a guess
// was right.
func (p *Proxy) lookup(tok string) (string, bool) {
	secret, ok := "", false
	for _, ph := range p.placeholders {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(ph)) == 1 {
			secret, ok = p.secrets[ph], true
		}
	}
	return secret, ok
}

// rewrite points the outgoing request at the upstream. The path is kept
// as the CLI sent it (it is already under the upstream's path); the Host
// header becomes the upstream's.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = p.upstream.Scheme
	pr.Out.URL.Host = p.upstream.Host
	pr.Out.Host = p.upstream.Host
	// The request body goes upstream as an in-memory reader, not as the
	// server's body: the transport may read a body once more after it has
	// sent it (to check there is nothing extra), and when that late read
	// comes after this handler has returned and the body is closed it
	// fails, and the transport then closes a connection it may already
	// have handed to the next request, which breaks that stream. With the
	// server's body that happened here to about one stream in a few
	// thousand (Go 1.26); with a buffered body to none in 64,000.
	if body, ok := pr.In.Context().Value(bodyKey{}).([]byte); ok {
		pr.Out.TransferEncoding = nil
		pr.Out.ContentLength = int64(len(body))
		if len(body) == 0 {
			pr.Out.Body, pr.Out.GetBody = nil, nil
			return
		}
		pr.Out.Body = io.NopCloser(bytes.NewReader(body))
		pr.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
}

// upstreamError answers a request the upstream could not serve. The
// error can quote the upstream URL, whose query may hold the real key, so
// it is redacted before it is logged or sent.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	msg := p.redact(err.Error())
	if errors.Is(err, context.Canceled) {
		p.log.Debug("credential proxy: request ended by the client", "method", r.Method, "path", r.URL.Path)
		return
	}
	p.log.Warn("credential proxy: upstream failed", "method", r.Method, "path", r.URL.Path, "err", msg)
	refuse(w, http.StatusBadGateway, "upstream failed: "+msg)
}

// redact replaces every secret (and its query-escaped form) in s.
func (p *Proxy) redact(s string) string {
	for _, secret := range p.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
		if esc := url.QueryEscape(secret); esc != secret {
			s = strings.ReplaceAll(s, esc, "[redacted]")
		}
	}
	return s
}

// refused logs and answers a request the proxy does not forward. Only the
// method and path are logged: the query may hold a placeholder.
func (p *Proxy) refused(w http.ResponseWriter, r *http.Request, status int, why string) {
	p.log.Warn("credential proxy: refused a request", "method", r.Method, "path", r.URL.Path, "status", status, "why", why)
	refuse(w, status, why)
}

// refuse writes an error body in the shape the vendors' clients parse
// (Anthropic's type/error, and error.message as OpenAI and Google use).
func refuse(w http.ResponseWriter, status int, why string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	msg := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace("kz credential proxy: " + why)
	_, _ = fmt.Fprintf(w, `{"type":"error","error":{"type":"kz_proxy_error","code":%d,"message":"%s"}}`, status, msg)
}
