//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
)

// probeTimeout bounds the trial run of bwrap.
const probeTimeout = 10 * time.Second

func probe() Status {
	abi, llErr := landlockABI()
	bw, bwWhy := probeBwrap()
	if bw.Kind == KindBubblewrap {
		bw.LandlockABI = abi
		return bw
	}
	if llErr == nil {
		return Status{Kind: KindLandlock, LandlockABI: abi, Reason: fmt.Sprintf(
			"Landlock ABI %d confines writes only (read-only: the temp dir; workspace-write: the workspace and the temp dir); "+
				"network, other processes and hidden paths are not enforced: %s", abi, bwWhy)}
	}
	return Status{Kind: KindNone, Reason: fmt.Sprintf(
		"no sandbox: %s, and %s; commands run unconfined after a person's yes or an allow rule", bwWhy, landlockWhy(llErr))}
}

// probeBwrap finds bwrap and runs it once with the namespaces and mounts
// of the profiles. It returns the reason it cannot be used otherwise.
// bwrap --version, which only names the version in `kz runtimes`, runs
// beside the trial run rather than before it.
func probeBwrap() (Status, string) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return Status{}, "bubblewrap (bwrap) is not installed"
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	version := make(chan string, 1)
	go func() { version <- bwrapVersion(ctx, path) }()
	disableUserns := true
	msg, err := trialRun(ctx, path, true)
	if err != nil && strings.Contains(msg, "disable-userns") {
		// bwrap before 0.8.0 lacks the option; the rest still holds.
		disableUserns = false
		msg, err = trialRun(ctx, path, false)
	}
	v := <-version
	if err != nil {
		why := "bubblewrap cannot create its namespaces here"
		if msg != "" {
			why += " (" + msg + ")"
		}
		if strings.Contains(msg, "ermission") || strings.Contains(msg, "Operation not permitted") {
			why += "; unprivileged user namespaces may be disabled (kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns on Ubuntu)"
		}
		return Status{}, why
	}
	return bwrapStatus(path, v, disableUserns), ""
}

// bwrapStatus is the status of a bubblewrap that works, from the probe or
// its cache.
func bwrapStatus(path, version string, disableUserns bool) Status {
	return Status{Kind: KindBubblewrap, Full: true, Bwrap: path, BwrapVersion: version, disableUserns: disableUserns,
		Reason: fmt.Sprintf("bubblewrap %s: full read-only and workspace-write profiles "+
			"(protected paths read-only, credentials hidden, own PID and network namespaces)", version)}
}

// bwrapVersion is what bwrap --version says, without its name; "" when it
// says nothing.
func bwrapVersion(ctx context.Context, path string) string {
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = childenv.Build(os.Environ(), childenv.Spec{})
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
}

// trialRun runs /bin/true under the flags every profile uses and returns
// bwrap's message when it fails.
func trialRun(ctx context.Context, bwrap string, disableUserns bool) (string, error) {
	dir, err := os.MkdirTemp("", "kz-sandbox-probe-")
	if err != nil {
		return "", fmt.Errorf("probe: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	args := append(namespaceArgs(false, disableUserns), fixedMounts(dir, dir)...)
	args = append(args, "--", "/bin/true")
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = childenv.Build(os.Environ(), childenv.Spec{})
	proc.OwnGroup(cmd)
	dieWithKZ(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stderr.String()), "bwrap:"))
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg, err
}

// namespaceArgs are bwrap's namespace and lifetime flags. The command gets
// a new session (no TIOCSTI into kz's terminal), dies with kz, and lives
// in its own user, PID and IPC namespaces, and network namespace unless
// network is allowed; it cannot create further user namespaces, whose
// capabilities would widen the kernel's attack surface.
func namespaceArgs(network, disableUserns bool) []string {
	args := []string{"--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc"}
	if !network {
		args = append(args, "--unshare-net")
	}
	if disableUserns {
		args = append(args, "--disable-userns")
	}
	return args
}

func landlockWhy(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return "the kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)"
	case errors.Is(err, syscall.EOPNOTSUPP):
		return "Landlock is disabled at boot (add landlock to the lsm= kernel parameter)"
	}
	return "Landlock is not available (" + err.Error() + ")"
}

// forceMechanism returns the status of a mechanism a policy asks for
// instead of the best one.
func forceMechanism(best Status, k Kind) (Status, error) {
	switch k {
	case KindNone:
		return Status{Kind: KindNone, LandlockABI: best.LandlockABI, Reason: "no sandbox (turned off): commands run unconfined"}, nil
	case KindLandlock:
		abi, err := landlockABI()
		if err != nil {
			return Status{}, fmt.Errorf("sandbox: Landlock asked for, but %s", landlockWhy(err))
		}
		return Status{Kind: KindLandlock, LandlockABI: abi, Reason: fmt.Sprintf("Landlock ABI %d confines writes only", abi)}, nil
	case KindBubblewrap:
		return Status{}, fmt.Errorf("sandbox: bubblewrap asked for, but %s", best.Reason)
	}
	return Status{}, fmt.Errorf("sandbox: unknown mechanism %q", k)
}

// dieWithKZ kills cmd when kz's thread that started it dies (bwrap adds
// its own --die-with-parent for the rest).
func dieWithKZ(cmd *exec.Cmd) { cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL }

// ownedByMe reports whether fi belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
