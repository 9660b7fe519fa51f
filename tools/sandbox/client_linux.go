//go:build linux

package sandbox

// kz's side of the sandbox servers (server_linux.go): one server per
// confinement of a session, started with the arguments a per-command bwrap
// would get, used while the per-command plan stays the same, retired as
// soon as it differs.
//
// One command at a time runs on a server. A second command of the same
// confinement that comes while the first runs does not wait for it (a
// build or a test may run for minutes) and does not start a second server
// (kz's start inside bwrap costs more than a bwrap of its own): it runs
// under its own bwrap, as every command did before servers.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/engine"
)

// serverStartTimeout bounds a server's start, from bwrap's exec to the
// server's ready message; a binary that does not answer (one without the
// WrapperMain hook) is given up and no server is tried again.
const serverStartTimeout = 10 * time.Second

// serverExecutable is the binary run as a server: kz itself (tests
// replace it to make the start fail).
var serverExecutable = "/proc/self/exe"

// serverPool is a sandbox's servers. Its fields are guarded by the
// sandbox's mutex.
type serverPool struct {
	// byConf is the server of each confinement.
	byConf map[engine.Confinement]*server
	// all are the servers whose bwrap may still run, started or starting.
	all map[*server]bool
	// off says why no server is used any more (a server could not
	// start); nil while they are. disabled turns them off (tests,
	// benchmarks).
	off      error
	disabled bool
	// reaping counts the servers whose bwrap has not been waited for.
	reaping sync.WaitGroup
	// hostMounts is kz's /proc/self/mountinfo, open from the first
	// server on (0: not yet), whose poll says the host's mount table
	// changed: a server's root is a copy of the host's mounts made at
	// its start, which mounts made later do not reach.
	hostMounts int
}

// server is kz's handle of one server.
type server struct {
	conf engine.Confinement
	// plan is the per-command mount plan the server was started with,
	// joined: a command may run on it only with the same plan.
	plan   string
	bwrap  *exec.Cmd
	output *os.File // bwrap's and the server's stderr (a memfd)
	// Guarded by the sandbox's mutex: conn is set once the server's
	// bwrap runs; cur is the command the server's messages are for;
	// retire says to retire it when its command is over.
	conn               *net.UnixConn
	cur                *serverCmd
	busy, gone, retire bool
	nextID             uint64
	// done is closed once the server's bwrap has been waited for.
	done chan struct{}
}

// serverCmd is a command running on a server.
type serverCmd struct {
	sv *server
	id uint64
	// msgs gets the server's messages about the command (started, then
	// its end), and is closed when the server is gone; exited is closed
	// once the end is known either way.
	msgs     chan message
	exited   chan struct{}
	watching sync.WaitGroup
}

// serverEligible reports whether spec may run on a server: only under
// bubblewrap, and not the agent CLIs' commands, which live as long as the
// session and bring their own writable directories and network.
func (s *Sandbox) serverEligible(spec Spec) bool {
	if s.status.Kind != KindBubblewrap || len(spec.ExtraWritable) > 0 || spec.KeepNetwork {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.srv.disabled && s.srv.off == nil && !s.closed
}

// serverPlan is the per-command mount plan of a command that may run on a
// server: the key of its server.
func (s *Sandbox) serverPlan(ctx context.Context, c engine.Confinement, spec Spec) ([]string, error) {
	return s.plan(ctx, c, spec)
}

// startOnServer runs the command on its confinement's server, starting
// one when there is none or when its plan is not the command's. It
// returns false (and no error) when the command must run under its own
// bwrap instead; nothing of it has run then.
func (c *Cmd) startOnServer() (bool, error) {
	if _, isFile := c.Stdin.(*os.File); c.Stdin != nil && !isFile {
		// Input copied from a reader could not be given back to a
		// fallback once read: its own bwrap.
		return false, nil
	}
	s := c.sb
	sv, err := s.serverFor(c.ctx, c.conf, c.plan, strings.Join(c.plan, "\x00"))
	if sv == nil || err != nil {
		return false, err
	}
	sc := &serverCmd{sv: sv, msgs: make(chan message, 4), exited: make(chan struct{})}
	s.mu.Lock()
	sv.nextID++
	sc.id = sv.nextID
	s.mu.Unlock()
	b, err := json.Marshal(message{Op: opRun, ID: sc.id, Argv: c.spec.Argv, Dir: c.spec.Dir, Env: c.spec.Env})
	if err != nil || len(b) > maxMessage {
		// Too large for one message: its own bwrap.
		s.releaseServer(sv)
		return false, nil
	}
	files, err := c.stdio()
	if err != nil {
		s.releaseServer(sv)
		c.abandonCopying()
		return false, err
	}
	s.mu.Lock()
	sv.cur = sc
	conn := sv.conn
	s.mu.Unlock()
	oob := unix.UnixRights(int(files[0].Fd()), int(files[1].Fd()), int(files[2].Fd()))
	_, _, err = conn.WriteMsgUnix(b, oob, nil)
	closeFiles(c.closeAfterStart)
	c.closeAfterStart = nil
	if err != nil {
		// Nothing was sent: the server is gone. This command runs
		// under its own bwrap, the next one starts a new server.
		s.retireServer(sv)
		c.abandonCopying()
		return false, nil
	}
	var m message
	var ok bool
	select {
	case m, ok = <-sc.msgs:
	case <-c.ctx.Done():
		// Whether it started is not known: the server goes, and
		// everything in it.
		s.retireServer(sv)
		c.abandonCopying()
		return true, fmt.Errorf("sandbox: %w", c.ctx.Err())
	}
	switch {
	case !ok:
		s.retireServer(sv)
		c.abandonCopying()
		return true, fmt.Errorf("sandbox: the sandbox server ended before the command started%s", sv.why())
	case m.Op == opStale:
		// Nothing ran, and the server has exited.
		s.retireServer(sv)
		c.abandonCopying()
		return false, nil
	case m.Op == opNoDir:
		s.releaseServer(sv)
		c.abandonCopying()
		return true, fmt.Errorf("sandbox: %s", m.Reason)
	case m.Op == opExit:
		// The program could not be executed: a setup error, as under
		// per-command bwrap.
		c.srv = sc
		c.finishOnServer(m)
		return true, nil
	case m.Op != opStarted:
		s.retireServer(sv)
		c.abandonCopying()
		return true, fmt.Errorf("sandbox: unexpected %q from the sandbox server", m.Op)
	}
	c.srv = sc
	sc.watching.Add(1)
	go sc.watch(c.ctx, s)
	return true, nil
}

// watch kills the command when ctx ends, and the whole server when the
// kill does not end it in time.
func (sc *serverCmd) watch(ctx context.Context, s *Sandbox) {
	defer sc.watching.Done()
	select {
	case <-sc.exited:
		return
	case <-ctx.Done():
	}
	_ = sc.signal(syscall.SIGKILL)
	t := time.NewTimer(waitDelay)
	defer t.Stop()
	select {
	case <-sc.exited:
	case <-t.C:
		s.retireServer(sc.sv)
	}
}

// signal asks the server to signal the command; nothing once it is over.
func (sc *serverCmd) signal(sig syscall.Signal) error {
	select {
	case <-sc.exited:
		return nil
	default:
	}
	b, err := json.Marshal(message{Op: opKill, ID: sc.id, Signal: int(sig)})
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	// An error means the server is gone, and the command with it.
	_, _ = sc.sv.conn.Write(b)
	return nil
}

// waitOnServer waits for the command's exit message, which the server
// sends once every process of the command has ended.
func (c *Cmd) waitOnServer() error {
	sc := c.srv
	if !c.finished {
		m, ok := <-sc.msgs
		if !ok || m.Op != opExit {
			// The server died (Close, kz killed it after a kill that
			// did not work, or a crash): the namespace and the
			// command with it. Its end is known once its bwrap has
			// exited, which it does after the namespace is gone.
			c.sb.retireServer(sc.sv)
			<-sc.sv.done
			m = message{Op: opExit, Signal: int(syscall.SIGKILL), Killed: true}
		}
		c.finishOnServer(m)
	}
	sc.watching.Wait()
	copyErr := c.finishCopying()
	if c.status.Code != 0 || c.status.Signal != 0 {
		return &ExitError{Code: c.status.Code, Signal: c.status.Signal}
	}
	return copyErr
}

// finishOnServer records the exit message and gives the server back.
func (c *Cmd) finishOnServer(m message) {
	c.finished = true
	c.status = ExitError{Code: m.Code, Signal: syscall.Signal(m.Signal)}
	if m.Signal != 0 {
		c.status.Code = -1
	}
	if m.Setup != "" {
		c.setupErr = fmt.Errorf("sandbox: the command could not be executed in the sandbox, so it did not run: %s", m.Setup)
	}
	c.sb.releaseServer(c.srv.sv)
}

// abandonCopying closes the host's ends of a command that did not start
// on the server and waits for the copying goroutines.
func (c *Cmd) abandonCopying() {
	closeFiles(c.closeAfterStart)
	c.closeAfterStart = nil
	for _, f := range c.closeAfterWait {
		_ = f.SetDeadline(time.Now())
	}
	c.copying.Wait()
	closeFiles(c.closeAfterWait)
	c.closeAfterWait = nil
	c.copyErr = nil
}

// serverFor returns the idle server of confinement conf and plan, marked
// busy, starting one when there is none; nil when the command must run
// under its own bwrap (the server is busy, or none can start).
func (s *Sandbox) serverFor(ctx context.Context, conf engine.Confinement, planArgs []string, plan string) (*server, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if s.srv.byConf == nil {
		s.srv.byConf, s.srv.all = map[engine.Confinement]*server{}, map[*server]bool{}
	}
	s.checkHostMountsLocked()
	if s.srv.off != nil || s.srv.disabled {
		s.mu.Unlock()
		return nil, nil
	}
	if sv := s.srv.byConf[conf]; sv != nil {
		switch {
		case sv.busy:
			s.mu.Unlock()
			return nil, nil
		case sv.plan == plan && !sv.gone:
			sv.busy = true
			s.mu.Unlock()
			return sv, nil
		}
		// Another plan (a new .git, hard link, credential file …):
		// the server's protections are not the command's.
		s.retireLocked(sv)
	}
	// The slot is taken while the server starts, so that a concurrent
	// command of the same confinement does not start another.
	sv := &server{conf: conf, plan: plan, busy: true, done: make(chan struct{})}
	s.srv.byConf[conf] = sv
	s.srv.all[sv] = true
	s.srv.reaping.Add(1)
	s.mu.Unlock()

	err := s.startServer(ctx, sv, planArgs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.srv.byConf[conf] == sv {
			delete(s.srv.byConf, conf)
		}
		sv.gone = true
		if ctx.Err() == nil && !s.closed && !errors.Is(err, errRetry) && !errors.Is(err, ErrClosed) {
			// A server that cannot start here will not start next
			// time either: every command takes its own bwrap.
			s.srv.off = err
		}
		return nil, nil
	}
	if s.closed || sv.gone {
		s.retireLocked(sv)
		return nil, nil
	}
	return sv, nil
}

// errRetry marks a failed start that says nothing about the next one: the
// plan does not fit one message, or the mounts were stale at once.
var errRetry = errors.New("sandbox: no server for this command")

// startServer starts sv's bwrap and waits for the server to be ready.
// On failure everything it started is ended and reaped.
func (s *Sandbox) startServer(ctx context.Context, sv *server, plan []string) (err error) {
	setup, err := json.Marshal(message{Op: opSetup, Targets: mountTargets(s.serverMounts(), plan)})
	if err != nil {
		s.reaped(sv)
		return fmt.Errorf("sandbox: %w", err)
	}
	if len(setup) > maxMessage {
		s.reaped(sv)
		return fmt.Errorf("%w: its mount plan is too large", errRetry)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		s.reaped(sv)
		return fmt.Errorf("sandbox: server socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "kz-sandbox-server"), os.NewFile(uintptr(fds[1]), "kz-sandbox-server")
	// kz must not keep the server's end past bwrap's start: the server's
	// death shows as the end of the connection only once no other
	// process holds it (bwrap itself holds it while the server runs).
	defer func() { _ = theirs.Close() }()
	// The server is this very binary, passed as a descriptor: its path
	// may be hidden in the sandbox (a test binary under /tmp) or replaced
	// since kz started (an upgrade).
	exe, err := os.Open(serverExecutable)
	if err != nil {
		_ = ours.Close()
		s.reaped(sv)
		return fmt.Errorf("sandbox: open kz's executable: %w", err)
	}
	defer func() { _ = exe.Close() }()
	fd, err := unix.MemfdCreate("kz-sandbox-server-output", unix.MFD_CLOEXEC)
	if err != nil {
		_ = ours.Close()
		s.reaped(sv)
		return fmt.Errorf("sandbox: server output: %w", err)
	}
	sv.output = os.NewFile(uintptr(fd), "kz-sandbox-server-output")

	args := namespaceArgs(sv.conf.Network, s.status.disableUserns)
	args = append(args, s.serverMounts()...)
	args = append(args, plan...)
	args = append(args, "--as-pid-1")
	extra := []*os.File{theirs, exe}
	if argsLen(args) > argsViaFD {
		af, err := memfdArgs(args)
		if err != nil {
			_ = ours.Close()
			s.reaped(sv)
			return err
		}
		defer func() { _ = af.Close() }()
		extra = append(extra, af)
		args = []string{"--args", "5"}
	}
	args = append(args, "--", "/proc/self/fd/4", serverArg, "--socket-fd", "3", "--exe-fd", "4", "--session", filepath.Base(s.root))
	cmd := exec.Command(s.status.Bwrap, args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = sv.output, sv.output
	cmd.ExtraFiles = extra
	// Own process group, and killed with kz's thread that started it;
	// bwrap's --die-with-parent takes the server with it, and the server
	// exits when kz's end of the socket closes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = ours.Close()
		s.reaped(sv)
		return fmt.Errorf("sandbox: start bwrap for a sandbox server: %w", err)
	}
	sv.bwrap = cmd
	_ = theirs.Close()
	c, err := net.FileConn(ours)
	_ = ours.Close()
	if err != nil {
		sv.end()
		s.reaped(sv)
		return fmt.Errorf("sandbox: server socket: %w", err)
	}
	s.mu.Lock()
	sv.conn = c.(*net.UnixConn)
	gone := sv.gone
	s.mu.Unlock()
	if gone {
		// Close came while bwrap started.
		sv.end()
		s.reaped(sv)
		return ErrClosed
	}
	ready, err := sv.handshake(ctx, setup)
	if err != nil {
		sv.end()
		s.reaped(sv)
		return fmt.Errorf("sandbox: the sandbox server did not start: %w%s", err, sv.why())
	}
	if ready.Op != opReady {
		sv.end()
		s.reaped(sv)
		err := fmt.Errorf("sandbox: the sandbox server did not start: %s", ready.Reason)
		if !ready.Fatal {
			// Its mounts were stale from the start (a path appeared
			// while bwrap mounted): the next command tries again.
			err = fmt.Errorf("%w: %w", errRetry, err)
		}
		return err
	}
	go sv.read(s)
	return nil
}

// handshake sends the setup and waits for the server's answer, within
// serverStartTimeout and ctx.
func (sv *server) handshake(ctx context.Context, setup []byte) (message, error) {
	if _, err := sv.conn.Write(setup); err != nil {
		return message{}, err
	}
	_ = sv.conn.SetReadDeadline(time.Now().Add(serverStartTimeout))
	stop := context.AfterFunc(ctx, func() { _ = sv.conn.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64<<10)
	n, err := sv.conn.Read(buf)
	if err != nil {
		if ctx.Err() != nil {
			return message{}, ctx.Err()
		}
		return message{}, err
	}
	_ = sv.conn.SetReadDeadline(time.Time{})
	var m message
	if err := json.Unmarshal(buf[:n], &m); err != nil {
		return message{}, fmt.Errorf("bad message: %w", err)
	}
	return m, nil
}

// read hands the server's messages to the command they are about until
// the server is gone, then ends and reaps its bwrap.
func (sv *server) read(s *Sandbox) {
	buf := make([]byte, 64<<10)
	for {
		n, err := sv.conn.Read(buf)
		if err != nil || n == 0 {
			break
		}
		var m message
		if json.Unmarshal(buf[:n], &m) != nil {
			break
		}
		s.mu.Lock()
		if sc := sv.cur; sc != nil && sc.id == m.ID {
			// At most two messages come for a command (started, then
			// its end), so the buffer never fills.
			sc.msgs <- m
			if m.Op != opStarted {
				sv.cur = nil
				close(sc.exited)
			}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	if sc := sv.cur; sc != nil {
		sv.cur = nil
		close(sc.exited)
		close(sc.msgs)
	}
	sv.gone = true
	if s.srv.byConf[sv.conf] == sv {
		delete(s.srv.byConf, sv.conf)
	}
	s.mu.Unlock()
	sv.end()
	s.reaped(sv)
}

// end ends the server and waits until its bwrap has exited. Closing
// kz's end of the socket makes the server exit at once, even in the
// middle of a command, and as PID 1 it takes every process of the sandbox
// with it; bwrap waits for it and exits only once the kernel has ended
// the whole PID namespace. So when end returns, nothing of the sandbox is
// left. A server that does not exit within waitDelay (stopped, hung) is
// killed with bwrap, whose --die-with-parent sends it SIGKILL; its
// namespace then ends a moment after end returns.
func (sv *server) end() {
	if sv.conn != nil {
		_ = sv.conn.Close()
	}
	if sv.bwrap == nil || sv.bwrap.Process == nil {
		return
	}
	t := time.AfterFunc(waitDelay, func() { _ = sv.bwrap.Process.Kill() })
	_ = sv.bwrap.Wait()
	t.Stop()
}

// reaped forgets sv, whose bwrap end has waited for (or which never
// started one), and tells those waiting for it.
func (s *Sandbox) reaped(sv *server) {
	if sv.output != nil {
		_ = sv.output.Close()
	}
	s.mu.Lock()
	delete(s.srv.all, sv)
	s.mu.Unlock()
	close(sv.done)
	s.srv.reaping.Done()
}

// why returns bwrap's and the server's own words, if they said anything.
func (sv *server) why() string {
	if sv.output == nil {
		return ""
	}
	b := make([]byte, 2048)
	n, _ := sv.output.ReadAt(b, 0)
	if msg := strings.TrimSpace(string(b[:n])); msg != "" {
		return " (" + msg + ")"
	}
	return ""
}

// releaseServer makes sv idle again.
func (s *Sandbox) releaseServer(sv *server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv.busy = false
	if sv.retire {
		s.retireLocked(sv)
	}
}

// checkHostMountsLocked retires every server when the host's mount table
// changed since the last look: a per-command bwrap would see the new
// mounts. A server busy with a command is retired when it is over.
func (s *Sandbox) checkHostMountsLocked() {
	if s.srv.hostMounts == 0 {
		fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			s.srv.hostMounts = -1
			s.srv.off = fmt.Errorf("sandbox: watch the host's mounts: %w", err)
			return
		}
		s.srv.hostMounts = fd
		return
	}
	if s.srv.hostMounts < 0 {
		return
	}
	fds := []unix.PollFd{{Fd: int32(s.srv.hostMounts), Events: unix.POLLPRI}}
	if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
		return
	}
	for _, sv := range s.srv.byConf {
		if sv.busy {
			sv.retire = true
			delete(s.srv.byConf, sv.conf)
			continue
		}
		s.retireLocked(sv)
	}
}

// retireServer ends sv; its reader reaps it.
func (s *Sandbox) retireServer(sv *server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retireLocked(sv)
}

func (s *Sandbox) retireLocked(sv *server) {
	sv.gone = true
	if s.srv.byConf[sv.conf] == sv {
		delete(s.srv.byConf, sv.conf)
	}
	if sv.conn != nil {
		// Closing kz's end makes the server exit (its namespace with
		// it) and the reader reap bwrap.
		_ = sv.conn.Close()
	}
}

// closeServers ends every server and waits until their processes are
// gone. The sandbox is closed already.
func (s *Sandbox) closeServers() {
	s.mu.Lock()
	for sv := range s.srv.all {
		s.retireLocked(sv)
	}
	if s.srv.hostMounts > 0 {
		_ = unix.Close(s.srv.hostMounts)
		s.srv.hostMounts = -1
	}
	s.mu.Unlock()
	s.srv.reaping.Wait()
}

// serverMounts are a server's fixed mounts: a per-command bwrap's, and
// the IPC namespace's message queues at /dev/mqueue, so that the server
// can remove what a command left there.
func (s *Sandbox) serverMounts() []string {
	fixed := fixedMounts(s.tmp, s.shm)
	out := make([]string, 0, len(fixed)+2)
	for _, a := range fixed {
		if a == "--remount-ro" {
			out = append(out, "--mqueue", mqueueDir)
		}
		out = append(out, a)
	}
	return out
}

// mountTargets lists the destinations of bwrap's mount arguments: what
// the server checks is mounted.
func mountTargets(lists ...[]string) []string {
	var out []string
	for _, args := range lists {
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "--bind", "--ro-bind", "--bind-try", "--ro-bind-try", "--dev-bind", "--dev-bind-try":
				if i+2 < len(args) {
					out = append(out, args[i+2])
				}
				i += 2
			case "--dev", "--proc", "--tmpfs", "--mqueue":
				if i+1 < len(args) {
					out = append(out, args[i+1])
				}
				i++
			case "--remount-ro", "--chdir", "--dir":
				i++
			}
		}
	}
	return out
}
