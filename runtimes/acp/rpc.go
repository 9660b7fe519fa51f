package acp

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// wire is one JSON-RPC message in either direction. Codex omits the
// "jsonrpc" member on what it sends, and its request ids overlap kz's, so
// messages are routed on the presence of Method: id+method is a request
// from the CLI, method alone a notification, id alone a response.
type wire struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	// recv is when the reader decoded the line (for latency figures).
	recv time.Time
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (code %d): %s", e.Message, e.Code, truncate(string(e.Data), 500))
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// markerVar names the variable that marks every process descended from one
// CLI, so that children which left the CLI's process group (background
// terminals, setsid'd shells) are found and killed too.
const markerVar = "KZ_ACP_RUN"

// conn is one running CLI speaking JSON-RPC on stdio. The reader goroutine
// owns stdout; writes are serialised by wmu.
type conn struct {
	cmd    *exec.Cmd
	pgid   int
	marker string
	log    *slog.Logger

	wmu   sync.Mutex
	stdin io.WriteCloser

	nextID  atomic.Int64
	pmu     sync.Mutex
	pending map[int64]chan wire

	// in carries notifications and requests from the CLI; it is closed
	// after the process has been reaped.
	in chan wire
	// done is closed once the process has been reaped; waitErr is then set.
	done    chan struct{}
	waitErr error
	quit    chan struct{}
	qonce   sync.Once
	stderr  *tailBuffer
}

// startConn spawns command in dir in its own process group.
func startConn(command string, args []string, dir string, env []string, log *slog.Logger) (*conn, error) {
	path, err := exec.LookPath(command)
	if err != nil {
		return nil, err
	}
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	marker := markerVar + "=" + hex.EncodeToString(rnd[:])
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = append(env[:len(env):len(env)], marker)
	// Its own group, so that a Ctrl-C in kz's terminal does not reach it
	// and one signal reaches every child that stayed in the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	c := &conn{cmd: cmd, stdin: stdin, log: log, marker: marker, pending: map[int64]chan wire{},
		in: make(chan wire, 256), done: make(chan struct{}), quit: make(chan struct{}), stderr: &tailBuffer{max: 16 << 10}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.pgid = cmd.Process.Pid
	go c.read(stdout)
	return c, nil
}

// read decodes stdout line by line until EOF, then reaps the process and
// kills whatever is left of it, so no child outlives the CLI.
func (c *conn) read(stdout io.Reader) {
	defer func() {
		c.waitErr = c.cmd.Wait()
		c.killAll(syscall.SIGKILL)
		c.failPending()
		close(c.in)
		close(c.done)
	}()
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			return
		}
	}
}

func (c *conn) dispatch(line []byte) {
	var m wire
	if err := json.Unmarshal(line, &m); err != nil {
		c.log.Warn("skipping a line that is not JSON", "err", err, "line", truncate(string(line), 200))
		return
	}
	m.recv = time.Now()
	if m.Method == "" {
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			c.log.Warn("response with an unknown id", "id", string(m.ID))
			return
		}
		c.pmu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.pmu.Unlock()
		if ch != nil {
			ch <- m
		}
		return
	}
	select {
	case c.in <- m:
	case <-c.quit:
	}
}

func (c *conn) failPending() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for id, ch := range c.pending {
		ch <- wire{Error: &rpcError{Code: -32000, Message: "the CLI exited"}}
		delete(c.pending, id)
	}
}

// send writes one JSON line to the CLI's stdin.
func (c *conn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.stdin.Write(b); err != nil {
		return fmt.Errorf("write to the CLI: %w", err)
	}
	return nil
}

type outMsg struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id,omitempty"`
	Method  string `json:"method,omitempty"`
	Params  any    `json:"params,omitempty"`
}

// start sends a request and returns the channel its response arrives on.
func (c *conn) start(method string, params any) (int64, <-chan wire, error) {
	id := c.nextID.Add(1)
	ch := make(chan wire, 1)
	c.pmu.Lock()
	c.pending[id] = ch
	c.pmu.Unlock()
	select {
	case <-c.done:
		c.forget(id)
		return id, nil, errors.New("the CLI has exited")
	default:
	}
	if err := c.send(outMsg{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		c.forget(id)
		return id, nil, err
	}
	return id, ch, nil
}

func (c *conn) forget(id int64) {
	c.pmu.Lock()
	delete(c.pending, id)
	c.pmu.Unlock()
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.send(outMsg{JSONRPC: "2.0", Method: method, Params: params})
}

// reply answers a request of the CLI.
func (c *conn) reply(id json.RawMessage, result any) error {
	return c.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

// replyError refuses a request of the CLI.
func (c *conn) replyError(id json.RawMessage, code int, msg string) error {
	return c.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{Code: code, Message: msg}})
}

// stop ends the CLI: stdin is closed (the polite way out), then after grace
// the process group and every marked descendant get SIGKILL. It returns
// once the process is reaped.
func (c *conn) stop(grace time.Duration) {
	c.qonce.Do(func() { close(c.quit) })
	c.wmu.Lock()
	_ = c.stdin.Close()
	c.wmu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.killAll(syscall.SIGKILL)
		<-c.done
	}
	// Children that left the group and outlived their parent.
	c.killAll(syscall.SIGKILL)
}

// killNow kills at once, for an immediate interrupt.
func (c *conn) killNow() {
	c.qonce.Do(func() { close(c.quit) })
	c.killAll(syscall.SIGKILL)
	<-c.done
	c.killAll(syscall.SIGKILL)
}

// killAll signals the CLI's process group and every process that carries
// this CLI's marker.
func (c *conn) killAll(sig syscall.Signal) {
	_ = syscall.Kill(-c.pgid, sig)
	for _, pid := range markedPids(c.marker) {
		_ = syscall.Kill(pid, sig)
	}
}

// markedPids lists the processes whose environment holds marker, by
// reading /proc (nothing is found where there is none; the group kill
// remains).
func markedPids(marker string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("\x00" + marker + "\x00")
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || len(b) == 0 {
			continue
		}
		if bytes.Contains(append([]byte{0}, b...), want) {
			out = append(out, pid)
		}
	}
	return out
}

func (c *conn) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// exitText describes how the process ended, with the end of its stderr.
func (c *conn) exitText(name string) string {
	msg := "the " + name + " CLI exited"
	if c.waitErr != nil {
		msg += " (" + c.waitErr.Error() + ")"
	}
	if s := strings.TrimSpace(c.stderr.String()); s != "" {
		msg += ": " + truncate(s, 2000)
	}
	return msg
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
