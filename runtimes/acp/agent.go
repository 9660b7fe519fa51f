package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/runtimes/credproxy"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
)

// An ACP agent is driven as an editor drives it: one process per kz
// session, kept across the session's turns, with one initialize, one
// session/new (or session/load) and then a session/prompt per turn, so
// that a later turn continues the agent's own session without kz sending
// the transcript again. The process ends when the runtime or the kz
// session closes (Close, CloseSession), when it dies (the next turn starts
// another, which loads the agent's session or, failing that, primes a new
// one with kz's transcript), or when a turn leaves it in a state kz cannot
// vouch for (an immediate interrupt it did not acknowledge, a failed
// handshake).

// agent is one running agent process and what lives exactly as long as
// it: its credential proxy, whose placeholders are the only credentials
// the process holds and which must serve it for its whole life (a proxy
// per turn would leave the process with a dead endpoint), and what kz
// knows of the ACP session open in it. Its fields are owned by the turn
// holding the slot's lock.
type agent struct {
	c     *jsonrpc.Conn
	proxy *credproxy.Proxy
	// dir is the workspace the process runs in; a turn in another one
	// gets another process.
	dir string
	// trust is what kz told the process about its workspace's trust: an
	// untrusted agent reads none of the project's memory files and starts
	// no MCP server. noticed says the person was told so.
	trust   workspaceTrust
	noticed bool
	init    initResult
	// sessionID is the ACP session kz last prompted in this process
	// ("" before the first); sess is what session/new or session/load
	// answered for it, model and mode are its current model and mode, and
	// baseMode is the mode it started in, which a turn that needs no
	// special mode returns it to.
	sessionID   string
	sess        sessionResult
	model, mode string
	baseMode    string
}

// alive reports whether the process still runs: it has not been reaped,
// and the kernel does not know it dead either. An agent killed between
// turns is reaped only once its stdout ends, which a child of its that
// holds the pipe can put off indefinitely; the next turn must not take
// such an agent for a live one and fail as a crash.
func (a *agent) alive() bool { return !a.c.Exited() && !proc.Exited(a.c.Pid()) }

// stop ends the process: at once (SIGKILL to its group and every marked
// descendant), or politely (stdin closed, SIGKILL after grace). It returns
// once the process has been reaped, and only then closes the credential
// proxy, which the process may use until its end.
func (a *agent) stop(now bool, grace time.Duration) {
	if now {
		a.c.KillNow()
	} else {
		a.c.Stop(grace)
	}
	if a.proxy != nil {
		_ = a.proxy.Close()
	}
}

// slot is the agent of one kz session. mu is held by the turn running on
// it, so that the session's turns, and closing it, take their turns.
type slot struct {
	mu sync.Mutex
	// a is the running agent, nil between processes.
	a *agent
	// home is the session's Gemini overlay home, prepared before each
	// process starts; nil until the first start, or when the runtime
	// bounds no retries.
	home *geminiOverlay
}

// close stops the slot's agent and ends its overlay home. mu must be held.
func (s *slot) close(grace time.Duration) error {
	if s.a != nil {
		s.a.stop(false, grace)
		s.a = nil
	}
	if s.home != nil {
		err := s.home.Close()
		s.home = nil
		return err
	}
	return nil
}

// slotFor returns the slot of kz session id, creating it.
func (r *Runtime) slotFor(id string) (*slot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &engine.RuntimeError{Kind: engine.ErrInternal, Runtime: r.cfg.Name, Message: "the runtime is closed"}
	}
	s := r.slots[id]
	if s == nil {
		s = &slot{}
		r.slots[id] = s
	}
	return s, nil
}

// Close stops every agent process of the runtime and ends their overlay
// homes. It waits for a running turn to end first; turns started
// afterwards fail. It is safe to call more than once.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	slots := r.slots
	r.slots = map[string]*slot{}
	r.mu.Unlock()
	for _, s := range slots {
		r.closeSlot(s)
	}
	return nil
}

// CloseSession stops the agent process of one kz session, if any (the
// session closed, or switched to another runtime). A later turn of the
// session starts a new one.
func (r *Runtime) CloseSession(id string) {
	r.mu.Lock()
	s := r.slots[id]
	delete(r.slots, id)
	r.mu.Unlock()
	if s != nil {
		r.closeSlot(s)
	}
}

func (r *Runtime) closeSlot(s *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.close(r.cfg.KillGrace); err != nil {
		r.log.Warn("acp: gemini overlay home", "err", err)
	}
}

// PID is the process id of kz session id's agent, or 0 when none runs
// (for tests and diagnostics).
func (r *Runtime) PID(id string) int {
	r.mu.Lock()
	s := r.slots[id]
	r.mu.Unlock()
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.a == nil || !s.a.alive() {
		return 0
	}
	return s.a.c.Pid()
}

// safeName matches a session id usable as a directory name as it is.
// It is compiled on first use: its counted repetition makes a large
// program, which every kz start would otherwise pay for.
var safeName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
})

// homeDir is where kz session id keeps its overlay home under dir: the id
// itself when it is a plain name (kz's ids are), else a digest of it, so
// that no id can name a path outside dir.
func homeDir(dir, id string) string {
	if !safeName().MatchString(id) {
		sum := sha256.Sum256([]byte(id))
		id = "x-" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(dir, id)
}
