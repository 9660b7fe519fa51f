package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/internal/trickle"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/credproxy"
)

var errNoSuchFile = fs.ErrNotExist

// spawnKey is what a CLI process was started with that cannot change while
// it runs; a turn that needs another key gets a new process.
type spawnKey struct {
	workspace string
	args      string
}

// process is one running CLI. The reader goroutine owns stdout; writes to stdin
// are serialised by wmu.
type process struct {
	cmd *exec.Cmd
	// tree is the CLI's process group and the KZ_CLAUDE_RUN=<token> marker
	// of its environment.
	tree proc.Tree
	key  spawnKey
	log  *slog.Logger
	// confined says the CLI runs under the OS sandbox (see interrupt).
	confined bool
	// cancel releases what the sandbox holds for the command; called once
	// the process has been reaped.
	cancel context.CancelFunc
	// proxy holds the real Anthropic credential for this CLI, which only
	// has its placeholder; nil when the CLI uses its own login. It is
	// closed once the process has been reaped.
	proxy *credproxy.Proxy
	// cleanup removes what was made for this process only (its MCP
	// configuration file) once it has been reaped; may be nil.
	cleanup func()

	wmu   sync.Mutex
	stdin io.WriteCloser

	// msgs carries every line except control responses, which the reader
	// hands to their waiter. It is closed after the process has exited.
	msgs chan wireMsg
	// results counts the result lines the reader has taken from stdout,
	// counted before the line is handed over on msgs: a turn that sees it
	// move knows the CLI ended the turn, even while the line still waits
	// in msgs, and must not be killed as if it still ran.
	results atomic.Int64
	// done is closed once the process has been reaped and its stderr
	// read; waitErr is then set.
	done    chan struct{}
	waitErr error
	// quit is closed to unblock a reader that waits to hand over a line
	// nobody will read because the process is being stopped.
	quit     chan struct{}
	quitOnce sync.Once
	stderr   *proc.Tail
	// pipes are the CLI's stdout, which the reader owns, and stderr.
	pipes *proc.Pipes

	ctlMu   sync.Mutex
	ctlWait map[string]chan ctlResult
	nextID  atomic.Int64

	// Owned by the goroutine running the session's turns.
	sessionID string
	model     string
	// costBase is the CLI's cumulative cost at the end of the last turn.
	costBase float64
	// gotInit says a system/init arrived from this process, so a --resume
	// was accepted.
	gotInit bool
}

// ctlResult is the CLI's answer to one of kz's control requests.
type ctlResult struct {
	ok       bool
	response json.RawMessage
	err      string
}

// baseArgs are the flags that make the CLI machine-driven (protocol notes
// §2). --verbose is mandatory with stream-json output.
//
// disableAllHooks (hookGuardArgs, passed wherever a hook could come
// from: hookGuard) turns off the hooks of Claude's own settings files (the
// home's, and the project's .claude/settings.json that -p would run
// without asking for trust): under kz, the person's hooks are kz's
// [hooks], run once at kz's gate for every runtime, so a Claude hook
// would fire twice or, from an untrusted project, run at all. The hook
// kz registers over the control protocol is not a settings hook and
// keeps answering.
//
// --strict-mcp-config does the same for MCP servers: Claude would
// otherwise also start the servers of the project's .mcp.json (programs
// named by the repository, never passed through kz trust) and of the
// person's own Claude settings. Under kz the MCP servers are kz's
// [mcp.servers], handed over with --mcp-config, so one config serves every
// runtime and a project's servers start only after kz trust.
//
// --setting-sources user leaves out the project's own Claude settings
// (.claude/settings.json and .claude/settings.local.json, both files a
// repository can ship), which -p honours without asking for trust:
// permissions.allow and defaultMode would approve calls that kz's gate
// never sees, env would set the environment of every command Claude runs,
// and apiKeyHelper (with otelHeadersHelper, awsAuthRefresh and the other
// helpers) names a program Claude runs at start, before any prompt
// (TestRealProjectClaudeSettingsIgnored saw 2.1.197 run it). The person's
// own settings still apply.
var baseArgs = []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
	"--include-partial-messages", "--permission-prompt-tool", "stdio", "--strict-mcp-config", "--setting-sources", "user"}

// credSpec is where Claude Code reads its credential and endpoint.
// Verified with 2.1.197 against a fake API: ANTHROPIC_API_KEY is sent as
// x-api-key, ANTHROPIC_AUTH_TOKEN and CLAUDE_CODE_OAUTH_TOKEN as
// Authorization: Bearer (both when both are set), all three to
// ANTHROPIC_BASE_URL.
var credSpec = credproxy.Spec{
	KeyVars:         []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
	BaseURLVar:      "ANTHROPIC_BASE_URL",
	DefaultUpstream: "https://api.anthropic.com",
}

// start spawns the CLI in its own process group with a minimal
// environment, in which every Anthropic credential is replaced by the
// placeholder of a credential proxy of its own.
func start(confiner agentcli.Confiner, command string, args []string, dir string, env []string, log *slog.Logger, cleanup func()) (_ *process, err error) {
	defer func() {
		if err != nil && cleanup != nil {
			cleanup()
		}
	}()
	path, err := exec.LookPath(command)
	if err != nil {
		return nil, err
	}
	env, proxy, err := credproxy.Shield(env, credSpec, log)
	if err != nil {
		return nil, err
	}
	// The command lives until the process is reaped; the context only
	// lets the sandbox release what it holds for it then.
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			cancel()
			if proxy != nil {
				_ = proxy.Close()
			}
		}
	}()
	marker := proc.NewMarker(markerVar)
	env = append(env[:len(env):len(env)], marker)
	// Its own group, so that signals reach the CLI and every tool child
	// that stays in it, and a Ctrl-C in kz's terminal does not reach it
	// directly; confined to the workspace with its own home writable.
	cmd, err := agentcli.Command(ctx, confiner, append([]string{path}, args...), dir, env, []string{claudeHome(env)})
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	p := &process{cmd: cmd, cancel: cancel, cleanup: cleanup, confined: confiner != nil, stdin: stdin, log: log, proxy: proxy, msgs: make(chan wireMsg, 256), done: make(chan struct{}),
		quit: make(chan struct{}), stderr: proc.NewTail(16 << 10), ctlWait: map[string]chan ctlResult{}}
	if p.pipes, err = proc.NewPipes(cmd, p.stderr); err != nil {
		return nil, err
	}
	err = cmd.Start()
	p.pipes.Started(err)
	if err != nil {
		return nil, err
	}
	p.tree = agentcli.Tree(confiner, cmd.Process.Pid, marker)
	go p.read()
	return p, nil
}

// claudeHome is the directory Claude Code keeps its settings, sessions
// and shell snapshots in: CLAUDE_CONFIG_DIR, else ~/.claude. The CLI
// must be able to write it even when confined. (~/.claude.json, which it
// also writes where CLAUDE_CONFIG_DIR is not set, stays read-only: Claude
// 2.1.197 runs without persisting it.)
func claudeHome(env []string) string {
	if d := childenv.Lookup(env, "CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		return d
	}
	home := childenv.Lookup(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}

// read decodes stdout line by line until EOF (or until a stop lets go of
// it), then reaps the process and kills whatever is left in its group, so
// no tool child outlives the CLI.
func (p *process) read() {
	defer func() {
		p.waitErr = p.cmd.Wait()
		p.tree.Signal(syscall.SIGKILL)
		p.pipes.Close(proc.StderrLimit)
		p.cancel()
		if p.proxy != nil {
			_ = p.proxy.Close()
		}
		if p.cleanup != nil {
			p.cleanup()
		}
		p.failControl("the CLI exited")
		close(p.msgs)
		close(p.done)
	}()
	// A dense stream of deltas (a fast model's) is read in batches (a
	// trickle.Window apart, a trickle.Hold once it lasts), each time all of
	// it; any other line is read when it comes.
	trickle.ReadLines(p.pipes.Stdout(), p.dispatch)
}

// isDelta reports a stream_event that carries a content_block_delta (a
// piece of text, thinking or a tool's input). The kind is looked for in
// the raw event; a delta whose text names it is still a delta, and a line
// taken for one only waits a frame.
func isDelta(m wireMsg) bool {
	return m.Type == "stream_event" && bytes.Contains(m.Event, []byte(`"content_block_delta"`))
}

// dispatch decodes one line and hands it on; delta reports a streamed
// text or thinking delta (content_block_delta), the only kind of line
// the reader may hold for a frame.
func (p *process) dispatch(line []byte) (delta bool) {
	var m wireMsg
	if err := json.Unmarshal(line, &m); err != nil {
		p.log.Warn("claude: skipping a line that is not JSON", "err", err, "line", proc.Clip(string(line), 200))
		return false
	}
	delta = isDelta(m)
	m.recv = time.Now()
	if p.log.Enabled(context.Background(), slog.LevelDebug) {
		p.log.Debug("claude: line", "line", proc.Clip(string(line), 500))
	}
	if m.Type == "control_response" {
		p.deliverControl(m)
		return false
	}
	if m.Type == "result" {
		p.results.Add(1)
	}
	select {
	case p.msgs <- m:
	case <-p.quit:
	}
	return delta
}

// deliverControl hands the answer to one of kz's control requests to its
// waiter; an answer nobody waits for is dropped.
func (p *process) deliverControl(m wireMsg) {
	var r controlResponse
	if err := json.Unmarshal(m.Response, &r); err != nil {
		p.log.Warn("claude: malformed control_response", "err", err)
		return
	}
	p.ctlMu.Lock()
	ch := p.ctlWait[r.RequestID]
	delete(p.ctlWait, r.RequestID)
	p.ctlMu.Unlock()
	if ch != nil {
		ch <- ctlResult{ok: r.Subtype == "success", response: r.Response, err: r.Error}
	}
}

func (p *process) failControl(why string) {
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	for id, ch := range p.ctlWait {
		ch <- ctlResult{err: why}
		delete(p.ctlWait, id)
	}
}

// send writes one JSON line to the CLI's stdin.
func (p *process) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message for claude: %w", err)
	}
	b = append(b, '\n')
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := p.stdin.Write(b); err != nil {
		return fmt.Errorf("write to claude: %w", err)
	}
	return nil
}

// control sends a control request and returns the channel its answer
// arrives on (buffered, so the reader never blocks on it).
func (p *process) control(req map[string]any) (string, <-chan ctlResult, error) {
	id := fmt.Sprintf("kz-%d", p.nextID.Add(1))
	ch := make(chan ctlResult, 1)
	p.ctlMu.Lock()
	p.ctlWait[id] = ch
	p.ctlMu.Unlock()
	select {
	case <-p.done:
		p.forget(id)
		return id, nil, errors.New("the CLI has exited")
	default:
	}
	if err := p.send(map[string]any{"type": "control_request", "request_id": id, "request": req}); err != nil {
		p.forget(id)
		return id, nil, err
	}
	return id, ch, nil
}

func (p *process) forget(id string) {
	p.ctlMu.Lock()
	delete(p.ctlWait, id)
	p.ctlMu.Unlock()
}

// controlWait sends a control request and waits for its answer.
func (p *process) controlWait(ctx context.Context, req map[string]any) (json.RawMessage, error) {
	id, ch, err := p.control(req)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if !r.ok {
			return nil, fmt.Errorf("claude refused %v: %s", req["subtype"], r.err)
		}
		return r.response, nil
	case <-ctx.Done():
		p.forget(id)
		return nil, ctx.Err()
	}
}

// alive reports whether the process has not been reaped yet.
func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// usable reports whether the process can serve another turn: it has not
// been reaped, and the kernel does not know it dead either. A CLI killed
// between turns (by a person, the OOM killer, a crash) is reaped only
// once its stdout ends, which a surviving tool child holding that pipe
// can put off indefinitely; sending the next prompt to it would fail the
// turn as a crash.
func (p *process) usable() bool {
	return p.alive() && !proc.Exited(p.cmd.Process.Pid)
}

// kill is the immediate stop: SIGINT to the whole group (the CLI answers
// with an interrupted result and exits), SIGKILL to the group after grace.
// It returns once the process is reaped.
func (p *process) kill(grace time.Duration) {
	p.quitOnce.Do(func() { close(p.quit) })
	p.tree.Stop(p.done, grace, p.interrupt, func() { p.tree.Signal(syscall.SIGKILL) }, p.pipes.Release)
}

// killNow is the hard stop: SIGKILL to the group and every marked
// descendant at once. It returns once the process is reaped.
func (p *process) killNow() {
	p.quitOnce.Do(func() { close(p.quit) })
	p.tree.Signal(syscall.SIGKILL)
	<-p.done
}

// interrupt sends SIGINT to the CLI. Unconfined, the CLI leads its
// process group and the group gets it. Under bubblewrap the group is
// bwrap's, and the CLI runs in a session of its own inside the sandbox:
// bwrap would die of the signal and take the CLI with it before it could
// end its turn, so the CLI and its children, found by their marker, get
// the signal instead.
func (p *process) interrupt() {
	if !p.confined {
		proc.SignalGroup(p.tree.Pgid, syscall.SIGINT)
		return
	}
	for _, pid := range p.tree.Marked() {
		if pid != p.tree.Pgid {
			_ = syscall.Kill(pid, syscall.SIGINT)
		}
	}
}

// markerVar names the variable that marks every process descended from one
// CLI. Claude starts its Bash tool in a new session (setsid), outside the
// CLI's process group, so the group alone does not reach tool children;
// the inherited variable does, even after they are reparented.
const markerVar = "KZ_CLAUDE_RUN"

// shutdown ends an idle CLI politely: closing stdin makes it exit after
// its current work; a CLI that does not go gets killed.
func (p *process) shutdown(grace time.Duration) {
	p.quitOnce.Do(func() { close(p.quit) })
	closeStdin := func() {
		p.wmu.Lock()
		_ = p.stdin.Close()
		p.wmu.Unlock()
	}
	p.tree.Stop(p.done, grace, closeStdin, func() { p.kill(grace) }, p.pipes.Release)
}

// exitText describes how the process ended, with the end of its stderr.
func (p *process) exitText() string {
	msg := "the claude CLI exited"
	if p.waitErr != nil {
		msg += " (" + p.waitErr.Error() + ")"
	}
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		msg += ": " + proc.Clip(s, 2000)
	}
	return msg
}

// envSpec is what Claude Code gets of kz's environment besides what every
// agent CLI gets (agentcli.Env). Names carrying credentials are listed one
// by one: SECURITY.md rule 5 keeps every other KEY/SECRET/TOKEN/PASSWORD
// variable away from subprocesses, and the Anthropic credentials reach
// the CLI only as placeholders (credSpec). The prefixes are families of
// non-secret settings Claude reads. The defaults bound Claude's own
// retries (10 with backoff by default, also on 401) so that a dead
// endpoint fails in seconds and kz's failover chain takes over; a value
// in kz's environment or the configuration wins.
var envSpec = childenv.Spec{
	Pass:     []string{"IS_SANDBOX", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
	Prefixes: []string{"ANTHROPIC_", "CLAUDE_", "DISABLE_"},
	Defaults: []string{"CLAUDE_CODE_MAX_RETRIES=2", "DISABLE_AUTOUPDATER=1"},
}

// buildEnv returns the CLI's environment with the configured entries
// cfgEnv.
func buildEnv(cfgEnv []string) []string { return agentcli.Env(envSpec, cfgEnv) }
