//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/kaizen-code/kz/engine"
)

// Neither bubblewrap nor Landlock exists outside Linux: commands run
// unconfined, behind the permission gate only.

const wrapperArg = "__kz_landlock_sandbox"

func probe() Status {
	return Status{Kind: KindNone, Reason: "no sandbox: bubblewrap and Landlock are Linux-only; commands run unconfined after a person's yes or an allow rule"}
}

func forceMechanism(best Status, k Kind) (Status, error) {
	if k == KindNone {
		return best, nil
	}
	return Status{}, fmt.Errorf("sandbox: %s asked for, but %s", k, best.Reason)
}

// dieWithKZ does nothing: there is no parent-death signal outside Linux.
func dieWithKZ(*exec.Cmd) {}

func (s *Sandbox) bwrapCommand(context.Context, engine.Confinement, Spec, []string) (*exec.Cmd, *statusPipe, error) {
	return nil, nil, errors.New("sandbox: bubblewrap is Linux-only")
}

func (s *Sandbox) landlockCommand(context.Context, engine.Confinement, Spec, []string) (*exec.Cmd, *statusPipe, error) {
	return nil, nil, errors.New("sandbox: Landlock is Linux-only")
}

// IsWrapperInvocation reports whether args start kz as the Landlock wrapper.
func IsWrapperInvocation(args []string) bool { return len(args) > 1 && args[1] == wrapperArg }

// WrapperMain refuses to run anything: there is no Landlock here.
func WrapperMain([]string) int {
	fmt.Fprintln(os.Stderr, "kz sandbox: Landlock is Linux-only; the command was not run")
	return 126
}

// ownedByMe reports whether fi belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// tree is the search cache of a writable directory; nothing searches here.
type tree struct{}

func (*tree) close() {}

// saveTree does nothing: there is no search to keep.
func (*Sandbox) saveTree(*tree) {}

// probeCached is probe: there is nothing to cache without bubblewrap.
func probeCached(string) Status { return probe() }

// Prewarm does nothing: nothing searches here.
func (s *Sandbox) Prewarm() {}

func (s *Sandbox) stopPrewarm() {}
