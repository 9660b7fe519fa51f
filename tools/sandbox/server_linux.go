//go:build linux

package sandbox

// The sandbox server: kz re-executed inside one long-lived bwrap, as PID 1
// of the sandbox's PID namespace, runs the commands of one confinement
// one at a time, so that a command does not pay bwrap's start (its exec,
// its libraries, the namespaces and mounts: ~11 ms here) but only a fork
// and exec inside namespaces that already exist.
//
// What makes a command on the server as confined as one under its own
// bwrap:
//
//   - The namespaces and mounts are those a per-command bwrap would make:
//     kz starts the server with exactly the arguments of the per-command
//     path (client_linux.go) and recomputes them before every command; a
//     command runs on the server only while they are the same.
//   - The mounts are still in place. A bind mount holds the file or
//     directory it was made on, and when the host replaces that path (git
//     writes .git/config by renaming config.lock over it) the kernel
//     detaches the mount in every other namespace, which would leave the
//     new file writable here. The server watches /proc/self/mountinfo,
//     which signals any change of its namespace's mount table, checks at
//     its start that every target of the plan is a mount root (or is
//     missing), and that the missing ones are still missing before every
//     command; otherwise it refuses the command and exits ("stale"), and
//     kz runs the command another way.
//   - Nothing a command starts outlives it: each command runs in its own
//     session and process group, and when it exits the server, as PID 1,
//     kills every other process of the namespace (kill(-1, SIGKILL)) and
//     reaps until it has no child left (a process whose parent dies is
//     given to PID 1, so no child means no process). Only then is the exit
//     status reported and the next command accepted.
//   - A command cannot take over the server to outlive its call or to
//     watch the next one: the server drops every capability (bounding set
//     included, so that no exec gives them back) on the thread that starts
//     commands and makes itself non-dumpable, so that neither ptrace,
//     /proc/1/mem, /proc/1/fd nor pidfd_getfd reach it; the signals it
//     could get from inside the namespace are caught and dropped (PID 1
//     gets no SIGKILL or SIGSTOP from its own namespace). Its socket to kz
//     is a descriptor it inherited (a socketpair, which has no path) and
//     holds close-on-exec.
//   - What a command leaves besides processes is removed too: SysV IPC
//     objects and POSIX message queues of the namespace's own IPC
//     namespace, which a per-command bwrap would drop with the namespace.
//
// What is shared between the calls of one server: the private /tmp and
// /dev/shm, which every command of the session shares under per-command
// bwrap too; the user namespace's keyrings (data only, like /tmp); the
// network namespace without network (only its loopback device, since no
// process and so no socket survives); the PID counter.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/internal/childenv"
)

// serverArg is argv[1] of kz re-executed as a sandbox server.
const serverArg = "__kz_sandbox_server"

// maxMessage bounds one message between kz and a server. A SOCK_SEQPACKET
// message must fit the socket's send buffer (net.core.wmem_default,
// usually 208 KiB); a command whose request is larger runs under its own
// bwrap.
const maxMessage = 128 << 10

// Operations of the protocol.
const (
	opSetup   = "setup"   // kz → server, once: the plan's mount targets
	opRun     = "run"     // kz → server: a command, with its three descriptors
	opKill    = "kill"    // kz → server: signal the running command
	opReady   = "ready"   // server → kz: the mounts are verified
	opStarted = "started" // server → kz: the command runs
	opExit    = "exit"    // server → kz: the command and all its processes ended
	opNoDir   = "nodir"   // server → kz: the working directory is missing; nothing ran
	opStale   = "stale"   // server → kz: its mounts are not the plan's any more; nothing ran
)

// message is one message of the protocol, in either direction.
type message struct {
	Op string `json:"op"`
	ID uint64 `json:"id,omitempty"`
	// setup
	Targets []string `json:"targets,omitempty"`
	// run
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Env  []string `json:"env,omitempty"`
	// kill
	Signal int `json:"signal,omitempty"`
	// exit: Code is the exit status, or Signal the signal that ended
	// the command; Killed says kz asked for it; Setup is why the command
	// could not be executed (it did not run).
	Code   int    `json:"code,omitempty"`
	Killed bool   `json:"killed,omitempty"`
	Setup  string `json:"setup,omitempty"`
	// started
	Pid int `json:"pid,omitempty"`
	// ready, stale: Fatal says no server can work here.
	Missing int    `json:"missing,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Fatal   bool   `json:"fatal,omitempty"`
}

// serverMain is kz running as a sandbox server: args are [kz, serverArg,
// --socket-fd N, --exe-fd M, --session NAME]. It returns the process's
// exit status; as PID 1 its exit ends every process of the sandbox.
func serverMain(args []string) int {
	if err := serve(args); err != nil {
		// bwrap's stderr goes to a buffer kz reads when the server
		// does not become ready.
		fmt.Fprintf(os.Stderr, "kz sandbox server: %v\n", err)
		return 1
	}
	return 0
}

// serverState is what the reader goroutine shares with the main one.
type serverState struct {
	conn   *os.File
	runs   chan serverRun
	killMu sync.Mutex // guards cur
	cur    struct {
		id     uint64
		pgid   int
		killed bool
	}
}

// serverRun is a run request and its descriptors.
type serverRun struct {
	msg   message
	stdio []int
}

func serve(args []string) error {
	// Everything that starts commands runs on this thread: capabilities
	// and the bounding set are per thread, and a child inherits those
	// of the thread that forked it.
	runtime.LockOSThread()
	sock, exe, err := serverArgs(args)
	if err != nil {
		return err
	}
	_ = unix.Close(exe)
	if err := dropPrivileges(); err != nil {
		return err
	}
	// Every inherited descriptor but the socket is kz's business, not the
	// commands': none of them is passed on.
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("close-on-exec: %w", err)
	}
	// Signals from inside the namespace are caught (a caught signal,
	// unlike an ignored one, is reset for the commands by exec) and
	// dropped: only kz ends the server.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	go func() {
		for range sigs {
		}
	}()
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	// Opened before the mounts are checked: any change after the open
	// shows as an event, any before it in the check.
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open mountinfo: %w", err)
	}
	st := &serverState{conn: os.NewFile(uintptr(sock), "kz-sandbox-socket"), runs: make(chan serverRun)}
	setup, _, err := st.recv()
	if err != nil || setup.Op != opSetup {
		return fmt.Errorf("no setup message: %v", err)
	}
	missing, err := checkTargets(setup.Targets)
	if err != nil {
		_ = st.send(message{Op: opStale, Reason: err.Error(), Fatal: errors.Is(err, errNoMountRoot)})
		return nil
	}
	if err := st.send(message{Op: opReady, Missing: len(missing)}); err != nil {
		return err
	}
	go st.read()
	// The loop ends only with the server: read exits the process.
	for r := range st.runs {
		if why := stale(mounts, missing); why != "" {
			closeAll(r.stdio)
			_ = st.send(message{Op: opStale, ID: r.msg.ID, Reason: why})
			return nil
		}
		reply := st.run(r)
		if err := st.send(reply); err != nil {
			return err
		}
	}
	// Not reached: runs is never closed.
	return nil
}

func serverArgs(args []string) (sock, exe int, err error) {
	sock, exe = -1, -1
	rest := args[2:]
	for len(rest) >= 2 {
		switch rest[0] {
		case "--socket-fd", "--exe-fd":
			n, err := strconv.Atoi(rest[1])
			if err != nil || n < 3 {
				return -1, -1, fmt.Errorf("bad %s %q", rest[0], rest[1])
			}
			if rest[0] == "--socket-fd" {
				sock = n
			} else {
				exe = n
			}
		case "--session":
			// Only there for ps.
		default:
			return -1, -1, fmt.Errorf("bad server argument %q", rest[0])
		}
		rest = rest[2:]
	}
	if len(rest) != 0 || sock < 0 || exe < 0 {
		return -1, -1, errors.New("usage: __kz_sandbox_server --socket-fd N --exe-fd M [--session NAME]")
	}
	return sock, exe, nil
}

// dropPrivileges leaves this thread without capabilities, now and after
// any exec, and makes the process non-dumpable. Where kz runs as root,
// bwrap leaves the sandbox's root every capability of the sandbox's user
// namespace, CAP_SYS_PTRACE included, which would let a command trace the
// server; an unprivileged kz has none to drop.
func dropPrivileges() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		// EPERM: no CAP_SETPCAP, hence no capability to lose either;
		// the check below says so.
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	var got [2]unix.CapUserData
	if err := unix.Capget(&hdr, &got[0]); err != nil {
		return fmt.Errorf("check capabilities: %w", err)
	}
	for _, d := range got {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return errors.New("capabilities remain after dropping them")
		}
	}
	// Set last: a change of credentials may reset it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("non-dumpable: %w", err)
	}
	return nil
}

// errNoMountRoot: the kernel (before 5.8) cannot tell a server whether its
// mounts are in place, so no server is used.
var errNoMountRoot = errors.New("the kernel does not say which paths are mount points (statx STATX_ATTR_MOUNT_ROOT, Linux 5.8)")

// checkTargets checks that every mount target of the plan is a mount
// root, and returns those that are missing (a --ro-bind-try whose path
// did not exist): they must stay missing for the server's mounts to be
// the plan's.
func checkTargets(targets []string) ([]string, error) {
	var missing []string
	for _, t := range targets {
		var stx unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, t, unix.AT_SYMLINK_NOFOLLOW, 0, &stx)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			missing = append(missing, t)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("check mount %s: %w", t, err)
		}
		if stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
			return nil, errNoMountRoot
		}
		if stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
			return nil, fmt.Errorf("%s is not mounted", t)
		}
	}
	return missing, nil
}

// stale says why the server's mounts may no longer be the plan's, or "".
func stale(mounts int, missing []string) string {
	fds := []unix.PollFd{{Fd: int32(mounts), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return "poll mountinfo: " + err.Error()
		}
		if n > 0 {
			return "the mount table changed"
		}
		break
	}
	for _, p := range missing {
		if _, err := os.Lstat(p); err == nil {
			return p + " appeared"
		}
	}
	return ""
}

// read receives messages until kz closes its end: runs go to the main
// goroutine, kills are done at once. When kz closes its end (Close, a
// retirement, kz's death) or breaks the protocol, the server exits at
// once, even in the middle of a command, and as PID 1 takes every process
// of the sandbox with it: kz knows the sandbox is gone when bwrap, which
// waits for the server, exits.
func (st *serverState) read() {
	defer os.Exit(0)
	for {
		m, fds, err := st.recv()
		if err != nil {
			return
		}
		switch m.Op {
		case opRun:
			if len(fds) != 3 {
				closeAll(fds)
				return
			}
			st.runs <- serverRun{msg: m, stdio: fds}
		case opKill:
			closeAll(fds)
			st.kill(m.ID, syscall.Signal(m.Signal))
		default:
			closeAll(fds)
			return
		}
	}
}

// kill signals command id: SIGKILL ends every process of the namespace,
// another signal goes to the command's process group. A kill for a
// command that is over is dropped.
func (st *serverState) kill(id uint64, sig syscall.Signal) {
	st.killMu.Lock()
	defer st.killMu.Unlock()
	if st.cur.id != id || st.cur.pgid == 0 {
		return
	}
	st.cur.killed = true
	if sig == syscall.SIGKILL {
		_ = unix.Kill(-1, unix.SIGKILL)
		return
	}
	_ = unix.Kill(-st.cur.pgid, sig)
}

// run starts one command, waits for it, ends every process it left and
// returns the reply.
func (st *serverState) run(r serverRun) message {
	m := r.msg
	reply := message{Op: opExit, ID: m.ID}
	if fi, err := os.Stat(m.Dir); err != nil || !fi.IsDir() {
		closeAll(r.stdio)
		return message{Op: opNoDir, ID: m.ID, Reason: fmt.Sprintf("chdir %s: %v", m.Dir, errOr(err, "not a directory"))}
	}
	// bwrap sets PWD to the directory it changes to; so does the server.
	env := childenv.Set(m.Env, "PWD", m.Dir)
	path, err := lookPathIn(m.Argv[0], env, m.Dir)
	if err == nil {
		var pid int
		pid, err = syscall.ForkExec(path, m.Argv, &syscall.ProcAttr{Dir: m.Dir, Env: env,
			Files: []uintptr{uintptr(r.stdio[0]), uintptr(r.stdio[1]), uintptr(r.stdio[2])},
			Sys:   &syscall.SysProcAttr{Setsid: true}})
		if err == nil {
			closeAll(r.stdio)
			st.killMu.Lock()
			st.cur.id, st.cur.pgid, st.cur.killed = m.ID, pid, false
			st.killMu.Unlock()
			_ = st.send(message{Op: opStarted, ID: m.ID, Pid: pid})
			ws := reapUntil(pid)
			st.killMu.Lock()
			st.cur.pgid = 0
			reply.Killed = st.cur.killed
			st.killMu.Unlock()
			if ws.Signaled() {
				reply.Signal = int(ws.Signal())
			} else {
				reply.Code = ws.ExitStatus()
			}
			cleanIPC()
			return reply
		}
	}
	// Like a shell: 127 when the program is not found, 126 when it
	// cannot be executed. The command's stderr gets the reason, as it
	// gets bwrap's under the per-command path.
	reply.Code, reply.Setup = 126, fmt.Sprintf("execute %s: %v", m.Argv[0], err)
	if errors.Is(err, unix.ENOENT) {
		reply.Code = 127
	}
	_, _ = unix.Write(r.stdio[2], []byte("kz sandbox: "+reply.Setup+"\n"))
	closeAll(r.stdio)
	return reply
}

// reapUntil waits for pid, then kills every other process of the
// namespace and reaps until none is left, and returns pid's status.
func reapUntil(pid int) syscall.WaitStatus {
	var status syscall.WaitStatus
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: pid is gone already (cannot happen: only
			// this loop reaps).
			break
		}
		if got == pid {
			status = syscall.WaitStatus(ws)
			break
		}
	}
	// From PID 1, kill(-1) reaches every other process of the namespace.
	_ = unix.Kill(-1, unix.SIGKILL)
	for {
		_, err := unix.Wait4(-1, nil, unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return status
		}
	}
}

// cleanIPC removes the SysV IPC objects and POSIX message queues of the
// namespace, which outlive the processes that made them. The *_INFO
// controls count the objects in one call each, so that the list in
// /proc/sysvipc is read only when there is something to remove.
func cleanIPC() {
	for _, k := range []struct {
		file  string
		count func(buf *[128]byte) bool
		rm    func(id uintptr)
	}{
		{"shm", func(buf *[128]byte) bool {
			// struct shm_info: int used_ids; …
			_, _, e := unix.Syscall(unix.SYS_SHMCTL, 0, ipcShmInfo, uintptr(unsafe.Pointer(&buf[0])))
			return e != 0 || *(*int32)(unsafe.Pointer(&buf[0])) != 0
		}, func(id uintptr) { _, _, _ = unix.Syscall(unix.SYS_SHMCTL, id, unix.IPC_RMID, 0) }},
		{"sem", func(buf *[128]byte) bool {
			// struct seminfo: ten ints, the eighth (semusz) the sets.
			_, _, e := unix.Syscall6(unix.SYS_SEMCTL, 0, 0, ipcSemInfo, uintptr(unsafe.Pointer(&buf[0])), 0, 0)
			return e != 0 || *(*int32)(unsafe.Pointer(&buf[7*4])) != 0
		}, func(id uintptr) { _, _, _ = unix.Syscall6(unix.SYS_SEMCTL, id, 0, unix.IPC_RMID, 0, 0, 0) }},
		{"msg", func(buf *[128]byte) bool {
			// struct msginfo: int msgpool (the queues); …
			_, _, e := unix.Syscall(unix.SYS_MSGCTL, 0, ipcMsgInfo, uintptr(unsafe.Pointer(&buf[0])))
			return e != 0 || *(*int32)(unsafe.Pointer(&buf[0])) != 0
		}, func(id uintptr) { _, _, _ = unix.Syscall(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0) }},
	} {
		var buf [128]byte
		if !k.count(&buf) {
			continue
		}
		b, err := os.ReadFile("/proc/sysvipc/" + k.file)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for _, l := range lines[1:] {
			// key id perms …
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			if id, err := strconv.Atoi(f[1]); err == nil && id >= 0 {
				k.rm(uintptr(id))
			}
		}
	}
	if ents, err := os.ReadDir(mqueueDir); err == nil {
		for _, e := range ents {
			_ = os.Remove(filepath.Join(mqueueDir, e.Name()))
		}
	}
}

// The *_INFO commands of shmctl, semctl and msgctl (linux/shm.h, sem.h,
// msg.h), which x/sys/unix does not name.
const (
	ipcShmInfo = 14
	ipcSemInfo = 19
	ipcMsgInfo = 12
)

// mqueueDir is where the server's bwrap mounts the IPC namespace's
// message queues, so that the server can list and remove them.
const mqueueDir = "/dev/mqueue"

// lookPathIn finds file in the PATH of env, as the per-command bwrap's
// execvp does; a name with a slash is taken as it is (relative to dir).
func lookPathIn(file string, env []string, dir string) (string, error) {
	if strings.Contains(file, "/") {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", err
		}
		return p, nil
	}
	path := "/bin:/usr/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, file)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH: %w", file, unix.ENOENT)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return unix.EACCES
	}
	return unix.Access(p, unix.X_OK)
}

func (st *serverState) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = unix.Write(int(st.conn.Fd()), b)
	return err
}

// recv reads one message and the descriptors that came with it (received
// close-on-exec).
func (st *serverState) recv() (message, []int, error) {
	buf := make([]byte, maxMessage+1)
	oob := make([]byte, unix.CmsgSpace(3*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(int(st.conn.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return message{}, nil, err
		}
		var fds []int
		if oobn > 0 {
			cms, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err == nil {
				for _, cm := range cms {
					if got, err := unix.ParseUnixRights(&cm); err == nil {
						fds = append(fds, got...)
					}
				}
			}
		}
		if n == 0 {
			closeAll(fds)
			return message{}, nil, errors.New("kz closed the connection")
		}
		if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
			closeAll(fds)
			return message{}, nil, errors.New("message truncated")
		}
		var m message
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			closeAll(fds)
			return message{}, nil, fmt.Errorf("bad message: %w", err)
		}
		return m, fds, nil
	}
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}
