// Package jsonrpc drives an agent CLI that speaks JSON-RPC 2.0 over its
// stdin and stdout (Codex's app-server, any ACP agent): one process in its
// own process group, requests with ids, notifications, the CLI's own
// requests, and a kill that also reaches children which left the group.
package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/internal/trickle"
	"github.com/kaizen-code/kz/runtimes/agentcli"
)

// Message is one JSON-RPC message in either direction. Codex omits the
// "jsonrpc" member on what it sends, and its request ids overlap kz's, so
// messages are routed on the presence of Method: id+method is a request
// from the CLI, method alone a notification, id alone a response.
type Message struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	// recv is when the reader decoded the line (for latency figures).
	recv time.Time
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (code %d): %s", e.Message, e.Code, proc.Clip(string(e.Data), 500))
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// Conn is one running CLI speaking JSON-RPC on stdio. The reader goroutine
// owns stdout; writes are serialised by wmu.
type Conn struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	// tree is the CLI's process group and the marker of its environment.
	tree proc.Tree
	log  *slog.Logger

	wmu   sync.Mutex
	stdin io.WriteCloser

	nextID  atomic.Int64
	pmu     sync.Mutex
	pending map[int64]chan Message

	// In carries notifications and requests from the CLI; it is closed
	// after the process has been reaped.
	In chan Message
	// Done is closed once the process has been reaped and its stderr
	// read; WaitErr is then set and must not be read before.
	Done    chan struct{}
	WaitErr error
	quit    chan struct{}
	qonce   sync.Once
	Stderr  *proc.Tail
	// pipes are the CLI's stdout, which the reader owns, and stderr.
	pipes *proc.Pipes
	// delta reports a streamed delta (Start); nil reports none.
	delta func(Message) bool
}

// Start spawns command in dir in its own process group, under the
// confiner when there is one (nil runs it unconfined), with writable (the
// CLI's own home) writable besides the workspace. markerVar names the
// variable whose random value marks every process descended from it.
// delta reports the notifications that stream a reply piece by piece
// (the CLI's text and output deltas): while they come densely the reader
// takes them in batches (trickle), and every other line is read the
// moment it comes. nil holds no line.
func Start(confiner agentcli.Confiner, writable []string, command string, args []string, dir string, env []string,
	markerVar string, delta func(Message) bool, log *slog.Logger) (*Conn, error) {
	path, err := exec.LookPath(command)
	if err != nil {
		return nil, err
	}
	marker := proc.NewMarker(markerVar)
	// The command lives until the process is reaped; the context only
	// lets the sandbox release what it holds for it then.
	ctx, cancel := context.WithCancel(context.Background())
	// Its own group, so that a Ctrl-C in kz's terminal does not reach it
	// and one signal reaches every child that stayed in the group.
	cmd, err := agentcli.Command(ctx, confiner, append([]string{path}, args...), dir, append(env[:len(env):len(env)], marker), writable)
	if err != nil {
		cancel()
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			cancel()
		}
	}()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	c := &Conn{cmd: cmd, cancel: cancel, stdin: stdin, log: log, delta: delta, pending: map[int64]chan Message{},
		In: make(chan Message, 256), Done: make(chan struct{}), quit: make(chan struct{}), Stderr: proc.NewTail(16 << 10)}
	if c.pipes, err = proc.NewPipes(cmd, c.Stderr); err != nil {
		return nil, err
	}
	err = cmd.Start()
	c.pipes.Started(err)
	if err != nil {
		return nil, err
	}
	started = true
	c.tree = agentcli.Tree(confiner, cmd.Process.Pid, marker)
	go c.read()
	return c, nil
}

// read decodes stdout line by line until EOF (or until Stop lets go of
// it), then reaps the process and kills whatever is left of it, so no
// child outlives the CLI.
func (c *Conn) read() {
	defer func() {
		c.WaitErr = c.cmd.Wait()
		c.tree.Signal(syscall.SIGKILL)
		c.pipes.Close(proc.StderrLimit)
		c.cancel()
		c.failPending()
		close(c.In)
		close(c.Done)
	}()
	// A dense stream of deltas (a fast model's) is read in batches (a
	// trickle.Window apart, a trickle.Hold once it lasts), each time all of
	// it; any other line is read when it comes.
	trickle.ReadLines(c.pipes.Stdout(), c.dispatch)
}

// dispatch decodes one line and hands it on; delta reports a streamed
// delta notification (Start's delta), the only kind of line the reader
// may hold for a frame.
func (c *Conn) dispatch(line []byte) (delta bool) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		c.log.Warn("skipping a line that is not JSON", "err", err, "line", proc.Clip(string(line), 200))
		return false
	}
	m.recv = time.Now()
	if m.Method == "" {
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			c.log.Warn("response with an unknown id", "id", string(m.ID))
			return false
		}
		c.pmu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.pmu.Unlock()
		if ch != nil {
			ch <- m
		}
		return false
	}
	delta = c.delta != nil && c.delta(m)
	select {
	case c.In <- m:
	case <-c.quit:
	}
	return delta
}

func (c *Conn) failPending() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for id, ch := range c.pending {
		ch <- Message{Error: &Error{Code: -32000, Message: "the CLI exited"}}
		delete(c.pending, id)
	}
}

// Send writes one JSON line to the CLI's stdin.
func (c *Conn) Send(v any) error {
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

// Begin sends a request and returns the channel its response arrives on.
func (c *Conn) Begin(method string, params any) (int64, <-chan Message, error) {
	id := c.nextID.Add(1)
	ch := make(chan Message, 1)
	c.pmu.Lock()
	c.pending[id] = ch
	c.pmu.Unlock()
	select {
	case <-c.Done:
		c.Forget(id)
		return id, nil, errors.New("the CLI has exited")
	default:
	}
	if err := c.Send(outMsg{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		c.Forget(id)
		return id, nil, err
	}
	return id, ch, nil
}

// Forget drops the wait for the response to request id (its caller gave
// up on it).
func (c *Conn) Forget(id int64) {
	c.pmu.Lock()
	delete(c.pending, id)
	c.pmu.Unlock()
}

// Call sends a request and waits for its result.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, ch, err := c.Begin(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		c.Forget(id)
		return nil, ctx.Err()
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.Send(outMsg{JSONRPC: "2.0", Method: method, Params: params})
}

// Reply answers a request of the CLI.
func (c *Conn) Reply(id json.RawMessage, result any) error {
	return c.Send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

// ReplyError refuses a request of the CLI.
func (c *Conn) ReplyError(id json.RawMessage, code int, msg string) error {
	return c.Send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   Error           `json:"error"`
	}{"2.0", id, Error{Code: code, Message: msg}})
}

// Stop ends the CLI: stdin is closed (the polite way out), then after
// grace the process group and every marked descendant get SIGKILL. It
// returns once the process is reaped, or, in a sandbox of its own, once
// the CLI has begun to exit (or can do nothing else) and the sandbox is
// killed (proc.Tree.Stop): the kernel gives back the CLI's memory after
// that, without kz.
func (c *Conn) Stop(grace time.Duration) {
	c.qonce.Do(func() { close(c.quit) })
	closeStdin := func() {
		c.wmu.Lock()
		_ = c.stdin.Close()
		c.wmu.Unlock()
	}
	c.tree.Stop(c.Done, grace, closeStdin, func() { c.tree.Signal(syscall.SIGKILL) }, c.pipes.Release)
	// Children that left the group and outlived their parent.
	c.tree.Signal(syscall.SIGKILL)
}

// KillNow kills at once, for an immediate interrupt.
func (c *Conn) KillNow() {
	c.qonce.Do(func() { close(c.quit) })
	c.tree.Signal(syscall.SIGKILL)
	<-c.Done
	c.tree.Signal(syscall.SIGKILL)
}

// Pid is the process id of the CLI (the leader of its process group).
func (c *Conn) Pid() int { return c.tree.Pgid }

// Exited reports whether the process has been reaped.
func (c *Conn) Exited() bool {
	select {
	case <-c.Done:
		return true
	default:
		return false
	}
}

// ExitText describes how the process ended, with the end of its stderr.
func (c *Conn) ExitText(name string) string {
	msg := "the " + name + " CLI exited"
	if c.WaitErr != nil {
		msg += " (" + c.WaitErr.Error() + ")"
	}
	if s := strings.TrimSpace(c.Stderr.String()); s != "" {
		msg += ": " + proc.Clip(s, 2000)
	}
	return msg
}
