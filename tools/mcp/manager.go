package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/tools"
)

// State is where a server is in its life.
type State string

// States.
const (
	// StateIdle is a server that has not been started yet: kz starts
	// servers on first use, after the TUI's first frame.
	StateIdle       State = "not started"
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateFailed     State = "failed"
	StateExited     State = "exited"
	StateNotTrusted State = "not trusted"
	StateDisabled   State = "disabled"
	StateStopped    State = "stopped"
)

// Status is what kz mcp list and /mcp show of one server.
type Status struct {
	Name      string    `json:"name"`
	Transport Transport `json:"transport"`
	State     State     `json:"state"`
	// Tools are the kz names of the server's tools (mcp__NAME__tool).
	Tools []ToolInfo `json:"tools"`
	Error string     `json:"error,omitempty"`
	// Source is the configuration file that defines the server.
	Source string `json:"source,omitempty"`
}

// ToolInfo is one tool of a server.
type ToolInfo struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"read_only"`
}

// Manager owns the MCP servers of one kz process: it starts them on
// first use, keeps one client session per server and stops every process
// at Close. It is safe for concurrent use.
type Manager struct {
	client  *sdk.Client
	servers []*server
	// Environ is kz's environment, from which stdio servers' env and HTTP
	// servers' headers take their ${VAR}s (os.Environ by default).
	Environ func() []string

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// server is one configured server and its running session.
type server struct {
	spec Spec

	mu      sync.Mutex
	state   State
	err     string
	started chan struct{} // closed when a start attempt ends
	session *sdk.ClientSession
	pgid    int
	tools   []*Tool
}

// NewManager returns a manager of specs; nothing starts yet.
func NewManager(specs []Spec) *Manager {
	m := &Manager{client: sdk.NewClient(&sdk.Implementation{Name: "kz", Version: "1"}, nil), Environ: environ}
	for _, s := range specs {
		srv := &server{spec: s, state: StateIdle}
		switch {
		case s.NotTrusted:
			srv.state = StateNotTrusted
			srv.err = "the project's configuration is not trusted: run kz trust to start it"
		case s.Disabled:
			srv.state = StateDisabled
		}
		m.servers = append(m.servers, srv)
	}
	return m
}

// Empty reports whether no server is configured.
func (m *Manager) Empty() bool { return m == nil || len(m.servers) == 0 }

// Start starts every runnable server that has not been started, in
// parallel, and waits until each is ready or has failed (each within its
// startup timeout) or ctx ends. A server that fails is reported in its
// Status and by Tools' absence; it never fails the session.
func (m *Manager) Start(ctx context.Context) {
	if m == nil {
		return
	}
	var waits []chan struct{}
	for _, s := range m.servers {
		if ch := m.begin(s); ch != nil {
			waits = append(waits, ch)
		}
	}
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// begin starts s in the background unless it is started, starting or may
// not start; it returns the channel closed when the start ends, or nil.
func (m *Manager) begin(s *server) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == StateStarting:
		return s.started
	case m.closed || s.state != StateIdle:
		return nil
	}
	s.state, s.started = StateStarting, make(chan struct{})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.connect(s)
	}()
	return s.started
}

// connect starts one server and lists its tools, within its startup
// timeout. The process outlives the timeout's context: only Close or the
// server's own exit ends it.
func (m *Manager) connect(s *server) {
	ctx, cancel := context.WithTimeout(context.Background(), s.spec.StartupTimeout)
	defer cancel()
	session, pgid, err := m.dial(ctx, s.spec)
	var list []*Tool
	if err == nil {
		list, err = m.listTools(ctx, s, session)
		if err != nil {
			_ = session.Close()
			killGroup(pgid)
		}
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("did not start within %s: %w", s.spec.StartupTimeout, err)
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	s.mu.Lock()
	defer close(s.started)
	defer s.mu.Unlock()
	if err != nil {
		s.state, s.err = StateFailed, err.Error()
		return
	}
	if closed {
		// Close ran while the server started: it must not outlive it.
		_ = session.Close()
		killGroup(pgid)
		s.state = StateStopped
		return
	}
	s.state, s.session, s.pgid, s.tools = StateReady, session, pgid, list
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.watch(s, session)
	}()
}

// watch marks a server that ends by itself (a crash, a closed HTTP
// session), so that its tools' calls say so.
func (m *Manager) watch(s *server, session *sdk.ClientSession) {
	err := session.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	// The session stays for Close, which reaps the process.
	if s.session != session {
		return
	}
	if s.state == StateReady {
		s.state = StateExited
		s.err = "the server stopped"
		if err != nil {
			s.err += ": " + err.Error()
		}
	}
}

// dial connects to the server over its transport.
func (m *Manager) dial(ctx context.Context, spec Spec) (*sdk.ClientSession, int, error) {
	env := m.Environ()
	var t sdk.Transport
	pgid := 0
	switch spec.Transport {
	case Stdio:
		childEnv, err := spec.ChildEnv(env)
		if err != nil {
			return nil, 0, err
		}
		path, err := exec.LookPath(spec.Command)
		if err != nil {
			return nil, 0, fmt.Errorf("start %s: %w", spec.Command, err)
		}
		// The server's process is not tied to ctx (the startup
		// timeout): it lives until Close. It leads its own process group
		// so that Close stops whatever it started too.
		cmd := exec.Command(path, spec.Args...)
		cmd.Env = childEnv
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stderr = proc.NewTail(4096)
		// A process the server left behind may hold its stderr open:
		// Wait gives up on it soon after the server exits, and Close
		// kills the group.
		cmd.WaitDelay = 500 * time.Millisecond
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
		session, err := m.client.Connect(ctx, t, nil)
		if cmd.Process != nil {
			pgid = cmd.Process.Pid
		}
		if err != nil {
			killGroup(pgid)
			if tail, ok := cmd.Stderr.(*proc.Tail); ok && tail.String() != "" {
				return nil, 0, fmt.Errorf("%w (stderr: %s)", err, proc.Clip(tail.String(), 500))
			}
			return nil, 0, err
		}
		return session, pgid, nil
	case HTTP:
		headers, err := spec.ExpandedHeaders(env)
		if err != nil {
			return nil, 0, err
		}
		hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
		t = &sdk.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
		session, err := m.client.Connect(ctx, t, nil)
		return session, 0, err
	}
	return nil, 0, fmt.Errorf("mcp server %s: unknown transport %q", spec.Name, spec.Transport)
}

// listTools lists every tool of a new session (following pages).
func (m *Manager) listTools(ctx context.Context, s *server, session *sdk.ClientSession) ([]*Tool, error) {
	var out []*Tool
	seen := map[string]bool{}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		tool, err := newTool(m, s.spec, t)
		if err != nil {
			return nil, err
		}
		if seen[tool.spec.Name] {
			return nil, fmt.Errorf("two tools are both called %s once made a valid tool name", tool.spec.Name)
		}
		seen[tool.spec.Name] = true
		out = append(out, tool)
	}
	return out, nil
}

// Tools returns the tools of the servers that are ready.
func (m *Manager) Tools() []tools.Tool {
	if m == nil {
		return nil
	}
	var out []tools.Tool
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateReady {
			for _, t := range s.tools {
				out = append(out, t)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// ReadOnly reports whether name is a known read-only MCP tool: its server
// marks it readOnlyHint and is configured with trust_annotations. The
// gate asks it (permission.Gate.SetMCPReadOnly).
func (m *Manager) ReadOnly(name string) bool {
	if m == nil {
		return false
	}
	for _, s := range m.servers {
		s.mu.Lock()
		i := slices.IndexFunc(s.tools, func(t *Tool) bool { return t.spec.Name == name })
		ro := i >= 0 && s.tools[i].spec.ReadOnly
		s.mu.Unlock()
		if i >= 0 {
			return ro
		}
	}
	return false
}

// Statuses returns the state of every configured server, in
// configuration order.
func (m *Manager) Statuses() []Status {
	if m == nil {
		return nil
	}
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := Status{Name: s.spec.Name, Transport: s.spec.Transport, State: s.state, Error: s.err, Source: s.spec.Source, Tools: []ToolInfo{}}
		for _, t := range s.tools {
			st.Tools = append(st.Tools, ToolInfo{Name: t.spec.Name, ReadOnly: t.spec.ReadOnly})
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// call calls one tool on its server, within the server's tool timeout.
func (m *Manager) call(ctx context.Context, serverName, tool string, args json.RawMessage) (*sdk.CallToolResult, error) {
	i := slices.IndexFunc(m.servers, func(s *server) bool { return s.spec.Name == serverName })
	if i < 0 {
		return nil, fmt.Errorf("mcp server %s is not configured", serverName)
	}
	s := m.servers[i]
	s.mu.Lock()
	session, state, why := s.session, s.state, s.err
	s.mu.Unlock()
	if session == nil || state != StateReady {
		if why == "" {
			why = string(state)
		}
		return nil, fmt.Errorf("mcp server %s is not running (%s)", serverName, why)
	}
	ctx, cancel := context.WithTimeout(ctx, s.spec.ToolTimeout)
	defer cancel()
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("mcp server %s did not answer %s within %s: %w", serverName, tool, s.spec.ToolTimeout, err)
		case errors.Is(err, sdk.ErrConnectionClosed):
			return nil, fmt.Errorf("mcp server %s stopped during the call of %s: %w", serverName, tool, err)
		}
		return nil, fmt.Errorf("mcp server %s: %s: %w", serverName, tool, err)
	}
	return res, nil
}

// Close stops every server and waits for kz's goroutines of them: a
// stdio server's stdin is closed, then it is terminated, then its whole
// process group is killed, so no process outlives the session.
func (m *Manager) Close() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		s.mu.Lock()
		session, pgid := s.session, s.pgid
		s.session = nil
		if s.state == StateReady || s.state == StateExited {
			s.state = StateStopped
		}
		s.mu.Unlock()
		if session == nil {
			killGroup(pgid)
			continue
		}
		wg.Go(func() {
			_ = session.Close()
			killGroup(pgid)
		})
	}
	wg.Wait()
	m.wg.Wait()
}

// killGroup kills what is left of a stdio server's process group.
func killGroup(pgid int) {
	if pgid > 0 {
		proc.SignalGroup(pgid, syscall.SIGKILL)
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}
