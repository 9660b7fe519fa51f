// Package sandbox runs the shell commands kz starts (its bash tool, a
// proposal's VERIFY commands, the agent CLIs) under an OS sandbox whose
// profile makes the permission gate's decision true: a command the gate
// let run as read-only cannot write anything but a private temp dir, one
// allowed to write can write the workspace but not its .git, .kz, agent
// configuration or hard-linked files, neither sees credentials, kz's
// process or the network unless allowed, and every process a command
// starts ends with it.
//
// bubblewrap (bwrap), the tool Codex and Claude Code use on Linux, gives
// the full profiles: a mount namespace with read-only binds inside a
// writable workspace, a PID namespace with its own /proc, a network
// namespace. Where bwrap is missing or cannot create namespaces (e.g.
// Ubuntu's AppArmor restriction of unprivileged user namespaces), Landlock
// confines writes only; elsewhere commands run unconfined, and Probe says
// so in one line for `kz runtimes`.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
)

// Kind names the mechanism that confines commands.
type Kind string

// Kinds, strongest first.
const (
	// KindBubblewrap: bwrap works here; every profile is enforced in full.
	KindBubblewrap Kind = "bubblewrap"
	// KindLandlock: only Landlock is available; writes are confined
	// (read-only: nothing but the temp dir; workspace-write: the workspace
	// and the temp dir, protected paths included), but network, other
	// processes and hidden paths are not.
	KindLandlock Kind = "landlock"
	// KindNone: nothing confines commands on this machine.
	KindNone Kind = "none"
)

// Status says which sandbox this machine has and what it enforces.
type Status struct {
	Kind Kind `json:"kind"`
	// Full is true when every property of the profiles is enforced (only
	// bubblewrap).
	Full bool `json:"full"`
	// Reason is one short line for `kz runtimes`: what is enforced, or
	// why not.
	Reason string `json:"reason"`
	// Bwrap is the bubblewrap binary and BwrapVersion its version, when
	// Kind is bubblewrap.
	Bwrap        string `json:"bwrap,omitempty"`
	BwrapVersion string `json:"bwrap_version,omitempty"`
	// LandlockABI is the kernel's Landlock ABI (0: none).
	LandlockABI int `json:"landlock_abi,omitempty"`
	// disableUserns says bwrap accepts --disable-userns (0.8.0+), which
	// stops a command from creating nested user namespaces.
	disableUserns bool
}

// Probe finds the best sandbox this machine offers. It runs bwrap once,
// with the namespaces and mounts the profiles use, so that a bwrap that
// exists but cannot work here is reported with bwrap's own words and
// Landlock is used instead. The result is cached for the process, and a
// working bubblewrap also on disk (see probeCached), so that a later kz
// on the same boot with the same bwrap starts without running it.
var Probe = sync.OnceValue(func() Status { return probeCached(defaultProbeCache()) })

// Policy is what a session's sandbox confines commands to.
type Policy struct {
	// Workspace is the directory workspace-write commands may write
	// (absolute; symlinks are resolved).
	Workspace string
	// Writable are more directories workspace-write commands may write
	// ([sandbox] writable in the user config). Their protected paths stay
	// read-only like the workspace's.
	Writable []string
	// Hidden are files and directories no command may see: kz's own
	// config and data directories.
	Hidden []string
	// Home is the home directory whose credentials are hidden; empty
	// means the process's.
	Home string
	// TempRoot is where the private per-session temp dir is created;
	// empty means os.TempDir().
	TempRoot string
	// SearchCache is a directory where the search of the writable
	// directories for what to protect is kept for the next kz
	// (searchsave_linux.go). It is used only below one of Hidden, which
	// no command can write; empty keeps nothing.
	SearchCache string
	// NoWatch has every search check each directory with an lstat
	// rather than watch the directories with inotify: for a kz that runs
	// one turn and exits (kz -p), which runs one confined command or a
	// few, the watches cost more than the lstats they spare (some 6 ms
	// to add for 1,000 directories, 10-20 ms waiting for the kernel to
	// release them at the end, against 1-2 ms for the lstats).
	NoWatch bool
	// Mechanism forces a mechanism (tests, and a machine whose bwrap must
	// not be used); empty means Probe's. A mechanism this machine lacks is
	// an error of New.
	Mechanism Kind
}

// Spec is one command to run.
type Spec struct {
	// Argv is the program and its arguments; the program is looked up in
	// the PATH of Env.
	Argv []string
	// Dir is the working directory; empty means the workspace.
	Dir string
	// Env is the whole environment of the command; nil means the minimal,
	// credential-free one (childenv.Build with an empty Spec). TMPDIR is
	// always set to the private temp dir.
	Env []string
	// ExtraWritable are directories this command may also write under
	// workspace-write (an agent CLI's own config home). Unlike
	// Policy.Writable they are not searched for protected paths, and
	// nothing in them is hidden (a CLI reads its own login there): the
	// caller owns them.
	ExtraWritable []string
	// KeepNetwork gives the command the host's network whatever its
	// confinement says: an agent CLI must reach kz's credential proxy on
	// the host's loopback.
	KeepNetwork bool
}

// Limits of the search for protected paths, credentials and hard links in
// each writable directory. Past MaxDirs a command that needs the search
// is not run: kz cannot promise that .git and hard-linked files stay
// read-only (or that credentials are hidden) in a tree it did not see.
// Past MaxMounts, likewise: that many read-only mounts would make every
// command slow, and a few of them must not be silently dropped.
const (
	MaxDirs   = 100_000
	MaxMounts = 4096
)

// maxDirs and maxMounts are the limits in force; tests lower them.
var (
	maxDirs   = MaxDirs
	maxMounts = MaxMounts
)

// ErrClosed is returned by Command after Close.
var ErrClosed = errors.New("sandbox: closed")

// Sandbox confines the commands of one session. It is safe for concurrent
// use.
type Sandbox struct {
	status Status
	pol    Policy
	home   string
	root   string // the private directory: tmp/ and empty/
	tmp    string // mounted at /tmp inside bubblewrap
	shm    string // mounted at /dev/shm inside bubblewrap
	empty  string // an empty directory mounted over hidden ones
	mu     sync.Mutex
	closed bool
	trees  map[string]*tree // the scan cache of each writable root
	// saveDir is Policy.SearchCache when it is hidden, else "".
	saveDir string
	pending map[*exec.Cmd]*statusPipe
	srv     serverPool // the servers of Cmd's commands
	// warmMu guards Prewarm's search: warmDone closes when it ends,
	// warmCancel ends it.
	warmMu     sync.Mutex
	warmCancel context.CancelFunc
	warmDone   chan struct{}
}

// New prepares a session's sandbox: it checks the policy, creates the
// private temp dir and picks the mechanism.
func New(p Policy) (*Sandbox, error) { return newWith(Probe(), p) }

// newWith is New on the probe's status st.
func newWith(st Status, p Policy) (*Sandbox, error) {
	if p.Mechanism != "" && p.Mechanism != st.Kind {
		forced, err := forceMechanism(st, p.Mechanism)
		if err != nil {
			return nil, err
		}
		st = forced
	}
	if p.Workspace == "" {
		return nil, errors.New("sandbox: no workspace")
	}
	var err error
	if p.Workspace, err = resolveDir(p.Workspace); err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	home := p.Home
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return nil, fmt.Errorf("sandbox: find home directory: %w", err)
		}
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	writable := make([]string, 0, len(p.Writable))
	for _, w := range p.Writable {
		d, err := resolveDir(expandHome(w, home))
		if err != nil {
			return nil, fmt.Errorf("sandbox: writable directory %s: %w", w, err)
		}
		if err := checkWritable(d, home, p.Hidden); err != nil {
			return nil, fmt.Errorf("sandbox: writable directory %s: %w", w, err)
		}
		writable = append(writable, d)
	}
	p.Writable = writable
	tempRoot := p.TempRoot
	if tempRoot == "" {
		tempRoot = os.TempDir()
	}
	removeStale(tempRoot)
	// The name holds kz's pid and start time, so that a later kz can tell
	// a directory whose kz was killed (and could not remove it) from one
	// in use.
	root, err := os.MkdirTemp(tempRoot, fmt.Sprintf("%s%d-%d-", tempPrefix, os.Getpid(), proc.SelfStart()))
	if err != nil {
		return nil, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	s := &Sandbox{status: st, pol: p, home: home, root: root, tmp: filepath.Join(root, "tmp"), shm: filepath.Join(root, "shm"),
		empty: filepath.Join(root, "empty"),
		trees: map[string]*tree{}, pending: map[*exec.Cmd]*statusPipe{}, saveDir: hiddenDir(p.SearchCache, p.Hidden)}
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{s.tmp, 0o700}, {s.shm, 0o700}, {s.empty, 0o500}} {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			_ = os.RemoveAll(root)
			return nil, fmt.Errorf("sandbox: private temp dir: %w", err)
		}
	}
	return s, nil
}

// Status is the mechanism this sandbox uses.
func (s *Sandbox) Status() Status { return s.status }

// TempDir is the private temp dir on the host (the /tmp of bubblewrap
// commands, TMPDIR of the others).
func (s *Sandbox) TempDir() string { return s.tmp }

// Workspace is the policy's workspace, resolved.
func (s *Sandbox) Workspace() string { return s.pol.Workspace }

// Command returns an unstarted command that runs spec under confinement c
// (the zero confinement is read-only without network). ctx bounds the
// preparation (the search of the workspace) and the command's life: when
// it ends, the command's process group is killed, and under bubblewrap
// every process the command started with it.
//
// The command runs in its own process group. The caller sets Stdin,
// Stdout and Stderr, and must not change Path, Args, Env, Dir,
// ExtraFiles or SysProcAttr. After Wait, SetupError says whether the
// sandbox itself failed (the command then did not run).
func (s *Sandbox) Command(ctx context.Context, c engine.Confinement, spec Spec) (*exec.Cmd, error) {
	c, spec, err := s.checkSpec(c, spec)
	if err != nil {
		return nil, err
	}
	env := spec.Env
	if env == nil {
		env = childenv.Build(os.Environ(), childenv.Spec{})
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	var (
		cmd *exec.Cmd
		sp  *statusPipe
	)
	switch s.status.Kind {
	case KindBubblewrap:
		cmd, sp, err = s.bwrapCommand(ctx, c, spec, childenv.Set(env, "TMPDIR", "/tmp"))
	case KindLandlock:
		cmd, sp, err = s.landlockCommand(ctx, c, spec, childenv.Set(env, "TMPDIR", s.tmp))
	default:
		cmd = exec.CommandContext(ctx, spec.Argv[0], spec.Argv[1:]...)
		cmd.Env = childenv.Set(env, "TMPDIR", s.tmp)
	}
	if err != nil {
		return nil, err
	}
	cmd.Dir = spec.Dir
	proc.OwnGroup(cmd)
	dieWithKZ(cmd)
	if s.status.Kind == KindBubblewrap {
		// The sandbox's PID namespace ends with its first process,
		// bubblewrap's child, which left the group (--new-session):
		// cancelling kills it too, not only through --die-with-parent
		// (see proc.Tree.PIDNamespace).
		group := cmd.Cancel
		cmd.Cancel = func() error {
			if cmd.Process != nil {
				proc.KillChildren(cmd.Process.Pid)
			}
			return group()
		}
	}
	if sp != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			sp.close()
			return nil, ErrClosed
		}
		s.pending[cmd] = sp
	}
	return cmd, nil
}

// checkSpec checks a command's confinement and spec, and fills in the
// defaults: the strictest confinement, the workspace as directory.
func (s *Sandbox) checkSpec(c engine.Confinement, spec Spec) (engine.Confinement, Spec, error) {
	c = c.OrStrictest()
	if c.Profile != engine.ProfileReadOnly && c.Profile != engine.ProfileWorkspaceWrite {
		return c, spec, fmt.Errorf("sandbox: unknown profile %q", c.Profile)
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return c, spec, errors.New("sandbox: no command")
	}
	if spec.Dir == "" {
		spec.Dir = s.pol.Workspace
	}
	if !filepath.IsAbs(spec.Dir) {
		return c, spec, fmt.Errorf("sandbox: working directory %q is not absolute", spec.Dir)
	}
	for _, d := range spec.ExtraWritable {
		if !filepath.IsAbs(d) {
			return c, spec, fmt.Errorf("sandbox: writable directory %q is not absolute", d)
		}
	}
	return c, spec, nil
}

// SetupError reports, after cmd (from Command) has been waited for,
// whether the sandbox failed before the command ran: bwrap could not
// build the namespaces or mounts, or the Landlock wrapper could not
// confine itself. The command's own output then holds the sandbox's
// message. It returns nil when the command ran, whatever its exit status,
// and for commands of a machine without a sandbox. Call it once for each
// command, after Wait (or after Start failed): it also releases the pipe
// the sandbox reports through.
func (s *Sandbox) SetupError(cmd *exec.Cmd) error {
	s.mu.Lock()
	sp := s.pending[cmd]
	delete(s.pending, cmd)
	s.mu.Unlock()
	if sp == nil {
		return nil
	}
	err := sp.result()
	if err != nil && s.status.Kind == KindBubblewrap {
		// bwrap was found working, by this kz or by an earlier one on
		// the same boot, and now fails: the next kz probes again.
		forgetProbeCache(defaultProbeCache())
	}
	return err
}

// ForgetScans drops the scan caches of the writable directories, after
// saving them for the next kz (Policy.SearchCache); a command started
// afterwards searches its directories again. Each cache
// holds an inotify descriptor, and closing one waits for the kernel's
// grace period (3-8 ms each, measured on Linux 6.18), so a kz that is
// shutting down calls it while it waits for its CLIs to exit rather than
// after. The descriptors are closed at once, not one after the other.
func (s *Sandbox) ForgetScans() {
	s.mu.Lock()
	trees := s.trees
	s.trees = map[string]*tree{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range trees {
		wg.Go(func() {
			s.saveTree(t)
			t.close()
		})
	}
	wg.Wait()
}

// hiddenDir returns dir when it is absolute and lies below one of hidden,
// else "".
func hiddenDir(dir string, hidden []string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	dir = filepath.Clean(dir)
	for _, h := range hidden {
		if filepath.IsAbs(h) && within(filepath.Clean(h), dir) {
			return dir
		}
	}
	return ""
}

// Close ends the sandbox servers (and the commands running on them) and
// removes the private temp dir. Commands of Command already started keep
// running until their callers end them (whose SetupError still works);
// Command fails afterwards.
func (s *Sandbox) Close() error {
	// Prewarm's search holds the lock: it ends first.
	s.stopPrewarm()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	// The status pipes of Command's commands stay open: a command may be
	// in its Start in another goroutine, which passes the pipe's write
	// end to bwrap, and closing it here would hand bwrap a closed
	// descriptor, or one already reused for another file. Each pipe is
	// closed by its command's SetupError, which callers call after Wait
	// whether or not the sandbox was closed meanwhile.
	s.mu.Unlock()
	s.ForgetScans()
	s.closeServers()
	return removeAll(s.root)
}

// tempPrefix starts the name of every private temp dir.
const tempPrefix = "kz-sandbox-"

// removeStale removes the private temp dirs in root that a kz killed
// before its Close left behind: those of this user whose process is gone.
// It is best effort; nothing depends on it.
func removeStale(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		f := strings.SplitN(rest, "-", 3)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || start == 0 || proc.Alive(pid, start) {
			continue
		}
		p := filepath.Join(root, e.Name())
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() || !ownedByMe(fi) {
			continue
		}
		_ = removeAll(p)
	}
}

// removeAll removes dir even where a command left directories without
// write or search permission, which os.RemoveAll alone cannot enter.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("sandbox: remove private temp dir: %w", err)
	}
	return nil
}

// statusPipe is how a command tells its caller that the sandbox started
// it: bwrap writes its JSON status to w (an "exit-code" only once the
// command was executed); the Landlock wrapper writes its error there.
type statusPipe struct {
	r, w  *os.File
	parse func([]byte) error
	// args is bwrap's --args file, if any, closed with the pipe.
	args *os.File
}

// maxStatus bounds what is read from a status pipe.
const maxStatus = 64 << 10

func (p *statusPipe) result() error {
	_ = p.w.Close()
	if p.args != nil {
		_ = p.args.Close()
	}
	defer func() { _ = p.r.Close() }()
	// The sandbox's processes are gone once Wait returned, and none of
	// them passes the pipe on; the deadline only guards against a bug.
	_ = p.r.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 0, 512)
	for len(buf) < maxStatus {
		n, err := p.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
	}
	return p.parse(buf)
}

func (p *statusPipe) close() {
	_ = p.w.Close()
	if p.args != nil {
		_ = p.args.Close()
	}
	_ = p.r.Close()
}

func newStatusPipe(parse func([]byte) error) (*statusPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	return &statusPipe{r: r, w: w, parse: parse}, nil
}

// resolveDir makes p absolute, resolves its symlinks and checks that it is
// a directory.
func resolveDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", r)
	}
	return r, nil
}

// checkWritable refuses an extra writable directory that would open what
// the profiles keep closed: the root, the home itself or any directory
// holding it (its shell startup files), kz's own directories.
func checkWritable(d, home string, hidden []string) error {
	if d == "/" {
		return errors.New("the root directory cannot be writable")
	}
	if within(d, home) {
		return errors.New("it holds the home directory, whose shell startup files must stay read-only; name a directory inside it")
	}
	for _, h := range hidden {
		if within(d, h) || within(h, d) {
			return fmt.Errorf("it overlaps kz's own directory %s", h)
		}
	}
	return nil
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// within reports whether p is root or below it, by path components.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, "../")
}
