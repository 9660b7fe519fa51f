package proc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// OwnGroup makes cmd, made with exec.CommandContext, lead a process group
// of its own once started: one signal to the group reaches the command
// and every child that stays in it, and a Ctrl-C in kz's terminal does
// not reach it directly. When the context ends before the command does,
// the whole group is killed, not only the command; WaitDelay (2 seconds
// unless set) bounds how long Wait then waits for output pipes that a
// grandchild keeps open.
func OwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 2 * time.Second
	}
}

// SignalGroup sends sig to the process group that pgid leads. A group that
// is already gone is not an error worth reporting: the caller wanted it
// gone.
func SignalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// Stop ends a child politely, then by force: ask (a SIGTERM or SIGINT to
// its group, closing its stdin) is called at once; when done is not
// closed within grace, force (a SIGKILL) is called and Stop waits for
// done. It reports whether force was needed.
func Stop(done <-chan struct{}, grace time.Duration, ask, force func()) bool {
	return StopUnless(done, nil, grace, ask, force)
}

// StopUnless is Stop with a way to cut the grace short: when hurry closes
// during the grace period (the person asked for the hard kill), force is
// called at once instead of at the end of it. A nil hurry never closes.
func StopUnless(done, hurry <-chan struct{}, grace time.Duration, ask, force func()) bool {
	select {
	case <-done:
		return false
	default:
	}
	select {
	case <-hurry:
		// Asked to hurry before anything was asked politely: no grace.
		force()
		<-done
		return true
	default:
	}
	ask()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-hurry:
	case <-t.C:
	}
	force()
	<-done
	return true
}

// Tree is a child that leads its own process group, with the marker every
// process descended from it inherits. Some children start theirs in a new
// session (Claude Code's Bash tool, Codex's background terminals), out of
// reach of the group; the marker, an environment entry, reaches them even
// after they are reparented.
type Tree struct {
	// Pgid is the child's pid, which leads its group.
	Pgid int
	// Marker is the "NAME=token" entry of the child's environment (see
	// NewMarker); empty finds no descendant outside the group.
	Marker string
	// PIDNamespace says the child is a sandbox whose descendants all
	// live in a PID namespace of its own, whose first process is the
	// child's own child (bubblewrap with --unshare-pid): when that
	// process dies the kernel kills every process of the namespace,
	// however it left the group. A SIGKILL then goes to the group and to
	// the child's children (KillChildren), and Signal skips the scan of
	// /proc, which reads every process's environment on the machine
	// (some milliseconds on a desktop with hundreds of them) at every
	// CLI's end and kill. bubblewrap's --die-with-parent would end the
	// namespace with the child too, but a namespace was seen to outlive
	// its killed bubblewrap about once in a hundred cancelled commands,
	// so it is not relied on. Other signals, which do not end the
	// namespace, still go to every marked process.
	PIDNamespace bool
}

// NewMarker returns a fresh "name=<random token>" entry to add to a
// child's environment, which Tree.Marked then finds in every descendant.
func NewMarker(name string) string {
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	return name + "=" + hex.EncodeToString(rnd[:])
}

// Signal sends sig to the tree's process group and to every process that
// carries its marker, so that no descendant outlives the child. A SIGKILL
// to a tree in its own PID namespace goes to the group and to the child's
// children alone: the namespace ends with its first process (see
// PIDNamespace).
func (t Tree) Signal(sig syscall.Signal) {
	if t.PIDNamespace && sig == syscall.SIGKILL {
		// The children first: they are found through the child, which
		// the group's SIGKILL ends.
		KillChildren(t.Pgid)
		SignalGroup(t.Pgid, sig)
		return
	}
	SignalGroup(t.Pgid, sig)
	for _, pid := range t.Marked() {
		_ = syscall.Kill(pid, sig)
	}
}

// Marked lists the processes, kz itself excepted, whose environment holds
// the tree's marker. It reads /proc, so it finds nothing where there is
// none (the group signal remains).
func (t Tree) Marked() []int {
	if t.Marker == "" {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("\x00" + t.Marker + "\x00")
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

// endingPoll is how often Tree.Stop looks whether the command has begun
// to exit. A look is one read of /proc while it has not.
const endingPoll = time.Millisecond

// Stop is Stop for the tree of an agent CLI whose output kz reads until
// it ends. Under a PID namespace of its own it also watches, every
// endingPoll, for the command itself to be Ending, or doomed on two looks
// in a row (ends says why both): once it is, what is left of the tree is
// killed and release is called, which must let go of the command's
// output, and Stop then waits for done as ever. The command's descriptors
// close only once the kernel has given back its memory, and the
// namespace's first process reaps it only then, so without that the wait
// lasts as long (10 to 25 ms for Claude Code or Codex); killed, the child
// kz started (bubblewrap, outside the namespace) ends at once, and the
// kernel finishes the command's exit after kz has moved on, or exited.
// Nothing is lost: an ending command runs no more code, a doomed one
// wakes only to exit (what its threads wait for in the kernel, a disk
// write, SIGKILL does not cut short), and whatever of its tree still ran
// would have been killed with the namespace when it ended.
//
// Elsewhere (no namespace, or no /proc) it is Stop.
func (t Tree) Stop(done <-chan struct{}, grace time.Duration, ask, force, release func()) bool {
	if !t.PIDNamespace {
		return Stop(done, grace, ask, force)
	}
	select {
	case <-done:
		return false
	default:
	}
	ask()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	tick := time.NewTicker(endingPoll)
	defer tick.Stop()
	command := 0
	var watch endWatch
	for {
		select {
		case <-done:
			return false
		case <-timer.C:
			force()
			<-done
			return true
		case <-tick.C:
			if command == 0 {
				// The command is found once: its pid stays its own
				// until it is reaped, and after that the namespace
				// ends and done comes.
				if command = t.command(); command == 0 {
					continue
				}
			}
			if watch.over(command) {
				t.Signal(syscall.SIGKILL)
				release()
				<-done
				return false
			}
		}
	}
}

// endWatch is Tree.Stop's successive looks at its command.
type endWatch struct {
	// doomed: the last look found the command doomed.
	doomed bool
}

// over looks at pid once more and says whether it is over: Ending, or
// doomed at this look and the one before.
func (w *endWatch) over(pid int) bool {
	ending, doomed := ends(pid)
	over := ending || doomed && w.doomed
	w.doomed = doomed
	return over
}
