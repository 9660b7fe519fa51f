package clitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Traffic records what a fake model API received, for the checks that a
// key never reached the API outside its credential header: every request
// as text, the credential of each model request, and each model request's
// body as the fake decoded it (B). It is safe for concurrent use, as the
// handlers of an httptest server need.
type Traffic[B any] struct {
	mu     sync.Mutex
	raw    []string
	creds  []string
	bodies []B
}

// Receive reads r's body, records the request as text (method and URL,
// headers, body, one to a line) and returns the body. r.Body is replaced
// by a reader of the same bytes, so that the handler can still decode it.
func (tr *Traffic[B]) Receive(r *http.Request) []byte {
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	tr.mu.Lock()
	tr.raw = append(tr.raw, fmt.Sprintf("%s %s\n%v\n%s", r.Method, r.URL, r.Header, raw))
	tr.mu.Unlock()
	return raw
}

// AddCredential records the credential a model request carried.
func (tr *Traffic[B]) AddCredential(cred string) {
	tr.mu.Lock()
	tr.creds = append(tr.creds, cred)
	tr.mu.Unlock()
}

// AddBody records the decoded body of a model request.
func (tr *Traffic[B]) AddBody(body B) {
	tr.mu.Lock()
	tr.bodies = append(tr.bodies, body)
	tr.mu.Unlock()
}

// Received returns every request so far, as Receive wrote it.
func (tr *Traffic[B]) Received() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.raw...)
}

// Credentials returns the credential of every model request so far, in
// order.
func (tr *Traffic[B]) Credentials() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.creds...)
}

// Requests returns the body of every model request so far, in order.
func (tr *Traffic[B]) Requests() []B {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]B(nil), tr.bodies...)
}

// SplitReceived splits a request as Received returns it into its first
// line (method and URL), its headers and its body.
func SplitReceived(r string) (head, headers, body string) {
	head, rest, _ := strings.Cut(r, "\n")
	headers, body, _ = strings.Cut(rest, "\n")
	return head, headers, body
}

// CheckCredentials fails the test for every model request that did not
// carry the credential want (the real key the proxy swaps in, as the fake
// API records it).
func (tr *Traffic[B]) CheckCredentials(t testing.TB, want string) {
	t.Helper()
	for _, c := range tr.Credentials() {
		if c != want {
			t.Errorf("the API got credential %q, want %q swapped in", c, want)
		}
	}
}

// ProbeRequests returns the model requests of a probe turn (ProbeTurn)
// that ran n probes: request i+1 carries what probe i printed, and the
// last was answered "done". It fails the test now unless there are n+1.
func (tr *Traffic[B]) ProbeRequests(t testing.TB, n int) []B {
	t.Helper()
	reqs := tr.Requests()
	if len(reqs) != n+1 {
		t.Fatalf("%d model requests, want %d", len(reqs), n+1)
	}
	return reqs
}
