package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/trickle"
)

// RetryPolicy bounds the retries of one request. Only failures that may
// succeed a moment later are retried (rate limit, overload, 5xx, a dropped
// or refused connection), and only while nothing was streamed yet.
type RetryPolicy struct {
	// MaxAttempts counts the first try; zero means 3, one disables retries.
	MaxAttempts int
	// BaseDelay is the first backoff, doubled each retry with jitter; zero
	// means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff; zero means 8s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest provider retry-after hint kz waits for;
	// a longer hint ends the request at once with the hint in RetryAfter,
	// so the failover chain can move on. Zero means 30s.
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) attempts() int {
	if p.MaxAttempts > 0 {
		return p.MaxAttempts
	}
	return 3
}

func (p RetryPolicy) backoff(attempt int) time.Duration {
	base, maxd := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 8 * time.Second
	}
	d := base << min(attempt, 16)
	if d > maxd || d <= 0 {
		d = maxd
	}
	// Up to 25% jitter, so clients that failed together do not retry together.
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

func (p RetryPolicy) maxRetryAfter() time.Duration {
	if p.MaxRetryAfter > 0 {
		return p.MaxRetryAfter
	}
	return 30 * time.Second
}

// attemptFunc runs one attempt and reports whether any delta was delivered.
type attemptFunc func(ctx context.Context, rec *httpRecord) (Response, bool, error)

// withRetry runs attempts under the policy. classify turns an attempt's
// error into a *engine.RuntimeError.
func withRetry(ctx context.Context, cfg Config, model string, run attemptFunc, classify func(error, *httpRecord) *engine.RuntimeError) (Response, error) {
	pol := cfg.Retry
	var last *engine.RuntimeError
	for attempt := 0; attempt < pol.attempts(); attempt++ {
		rec := &httpRecord{}
		actx := context.WithValue(ctx, recordKey{}, rec)
		resp, streamed, err := run(actx, rec)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, &engine.RuntimeError{Kind: engine.ErrInterrupted, Model: model, Message: "request cancelled", Err: ctx.Err()}
		}
		re := classify(err, rec)
		re.Model = model
		if re.Kind == engine.ErrAuth {
			re.Message = fmt.Sprintf("%s (check the API key in $%s)", re.Message, cfg.keyEnv())
		}
		last = re
		if streamed || !retryableHere(re.Kind) || attempt+1 >= pol.attempts() {
			break
		}
		wait := pol.backoff(attempt)
		if re.RetryAfter > 0 {
			if re.RetryAfter > pol.maxRetryAfter() {
				break
			}
			wait = re.RetryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, &engine.RuntimeError{Kind: engine.ErrInterrupted, Model: model, Message: "request cancelled", Err: ctx.Err()}
		case <-t.C:
		}
	}
	return Response{}, last
}

// retryableHere reports whether the client itself retries a kind. Auth and
// bad requests would only fail again.
func retryableHere(k engine.ErrorKind) bool {
	switch k {
	case engine.ErrRateLimit, engine.ErrOverloaded, engine.ErrCrashed, engine.ErrRuntimeMissing:
		return true
	}
	return false
}

// errDropped marks a stream that ended before the provider's end marker.
var errDropped = errors.New("stream ended before the response was complete")

// httpRecord keeps what the transport saw of an attempt's HTTP response,
// because not every SDK error carries the headers (genai's does not).
type httpRecord struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
}

func (r *httpRecord) get() (int, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter
}

type recordKey struct{}

// recordingTransport records status and retry-after of each response in the
// request context's httpRecord and applies the configured extra headers.
type recordingTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if resp != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A fast model's dense stream of events is read in batches (a
		// trickle.Window apart, a trickle.Hold once it lasts), each time all
		// of it.
		resp.Body = trickle.NewReadCloser(resp.Body)
	}
	if rec, ok := req.Context().Value(recordKey{}).(*httpRecord); ok && resp != nil {
		rec.mu.Lock()
		rec.status = resp.StatusCode
		rec.retryAfter = parseRetryAfter(resp.Header)
		rec.mu.Unlock()
	}
	return resp, err
}

// newHTTPClient builds the HTTP client every SDK is given: response headers
// must arrive within the timeout; the body (the stream) has no deadline of
// its own because the turn's context bounds it.
func newHTTPClient(cfg Config) *http.Client {
	base := cfg.Transport
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = cfg.timeout()
		base = tr
	}
	return &http.Client{Transport: &recordingTransport{base: base, headers: cfg.Headers}}
}

// parseRetryAfter reads retry-after-ms (OpenAI, Anthropic) or retry-after in
// seconds or as an HTTP date.
func parseRetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// classifyStatus maps an HTTP status and error text to a kind. The text
// matters for 400s (context too long) and for errors sent inside a 200
// stream (Anthropic's overloaded_error event).
func classifyStatus(status int, text string) engine.ErrorKind {
	low := strings.ToLower(text)
	switch {
	case status == 401 || status == 403 || strings.Contains(low, "authentication_error") || strings.Contains(low, "permission_error"):
		return engine.ErrAuth
	case status == 429 || strings.Contains(low, "rate_limit") || strings.Contains(low, "resource_exhausted"):
		return engine.ErrRateLimit
	case status == 529 || strings.Contains(low, "overloaded"):
		return engine.ErrOverloaded
	case contextTooLong(low):
		return engine.ErrContextTooLong
	case status == 408 || status >= 500 || strings.Contains(low, "api_error") || strings.Contains(low, "unavailable"):
		return engine.ErrOverloaded
	case status >= 400:
		return engine.ErrBadRequest
	}
	return engine.ErrCrashed
}

func contextTooLong(low string) bool {
	for _, s := range []string{"context_length_exceeded", "context length", "context window", "prompt is too long",
		"too many tokens", "maximum context", "input token count", "exceeds the maximum number of tokens", "request too large"} {
		if strings.Contains(low, s) {
			return true
		}
	}
	return false
}

// classifyTransport handles failures below HTTP: a refused or unresolvable
// endpoint, a header timeout, a connection cut mid-stream.
func classifyTransport(err error, model string) *engine.RuntimeError {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial"):
		return &engine.RuntimeError{Kind: engine.ErrRuntimeMissing, Model: model, Message: "endpoint unreachable: " + err.Error(), Err: err}
	case errors.Is(err, errDropped) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &engine.RuntimeError{Kind: engine.ErrCrashed, Model: model, Message: "stream dropped: " + err.Error(), Err: err}
	}
	return &engine.RuntimeError{Kind: engine.ErrCrashed, Model: model, Message: err.Error(), Err: err}
}

var quietOnce sync.Once

// quietStdLog sends the standard logger to io.Discard while it still points
// at stderr. The genai SDK (and the Anthropic SDK's credential helpers) log
// through the standard logger; kz owns the terminal, and a stray line would
// tear the TUI. A program that set its own log output keeps it.
func quietStdLog() {
	quietOnce.Do(func() {
		if log.Writer() == os.Stderr {
			log.SetOutput(io.Discard)
		}
	})
}
