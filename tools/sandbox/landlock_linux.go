//go:build linux

package sandbox

// The fallback where bubblewrap cannot run: kz re-executes itself as a
// small wrapper that confines file-system writes with Landlock and then
// execs the real command, so the shell and everything it starts can write
// only where the profile allows (read-only: the private temp dir;
// workspace-write: the workspace, the configured writable directories and
// the temp dir). Landlock cannot carve .git out of a writable tree, hide
// files, or separate processes and the network, which is why this is not
// a full sandbox.
//
// We do not use Go-Landlock because its psx dependency, in a cgo build
// such as kz (SQLite), wraps pthread_create for the whole binary to reach
// every thread, and the wrapper does not need that: it restricts one
// locked OS thread and replaces the process with syscall.Exec from that
// same thread ("Case 2" of go-landlock's raw_syscalls_in_go.md), so no
// other thread ever runs unconfined code.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/engine"
)

// wrapperArg is argv[1] of kz re-executed as the Landlock wrapper. It
// cannot collide with a subcommand or a flag a person would type.
const wrapperArg = "__kz_landlock_sandbox"

// wrapperExitCode is the exit status of a wrapper that refused to run the
// command (like a shell's 126, "cannot execute"); the command never ran.
const wrapperExitCode = 126

// Write access rights by the ABI that introduced them. Read, execute and
// ioctl rights are deliberately not handled: reads stay with the gate.
const (
	landlockWriteV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// ABI 2 lets a rule allow linking or renaming a file into another
	// directory; without it the kernel refuses every such move.
	landlockWriteV2 = landlockWriteV1 | unix.LANDLOCK_ACCESS_FS_REFER
	// ABI 3 adds truncation (truncate(2), open with O_TRUNC).
	landlockWriteV3 = landlockWriteV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// landlockFileRights are the rights a rule on a non-directory may carry.
	landlockFileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE
)

// landlockDevices are character devices every shell writes to; they are
// writable in the sandbox when they exist.
var landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

func landlockABI() (int, error) {
	r, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	if int(r) < 1 {
		return 0, fmt.Errorf("unexpected Landlock ABI %d", int(r))
	}
	return int(r), nil
}

// landlockCommand starts spec through kz re-executed as the wrapper.
func (s *Sandbox) landlockCommand(ctx context.Context, c engine.Confinement, spec Spec, env []string) (*exec.Cmd, *statusPipe, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: locate kz for the Landlock wrapper: %w", err)
	}
	writable := []string{s.tmp}
	if c.Profile == engine.ProfileWorkspaceWrite {
		writable = append(writable, s.pol.Workspace)
		writable = append(writable, s.pol.Writable...)
		writable = append(writable, spec.ExtraWritable...)
		if c.Git {
			writable = append(writable, outsideGitDirs(s.pol.Workspace)...)
		}
	}
	sp, err := newStatusPipe(func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		return fmt.Errorf("sandbox: Landlock could not confine the command, so it was not run: %s", b)
	})
	if err != nil {
		return nil, nil, err
	}
	args := []string{wrapperArg, "--status-fd", "3"}
	for _, d := range writable {
		args = append(args, "--rw", d)
	}
	args = append(args, "--")
	args = append(args, spec.Argv...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{sp.w}
	return cmd, sp, nil
}

// IsWrapperInvocation reports whether args (os.Args) start kz as the
// Landlock wrapper or as a sandbox server (server_linux.go). main calls
// it before anything else, and so must the TestMain of a package whose
// tests run commands under Landlock or through (*Sandbox).Cmd:
//
//	if sandbox.IsWrapperInvocation(os.Args) { os.Exit(sandbox.WrapperMain(os.Args)) }
func IsWrapperInvocation(args []string) bool {
	return len(args) > 1 && (args[1] == wrapperArg || args[1] == serverArg)
}

// WrapperMain is kz running as the wrapper: args are [kz, wrapperArg,
// --status-fd N, --rw DIR..., --, PROGRAM, ARGS...]. It confines writes,
// then execs PROGRAM; it returns only on failure, with status 126 and a
// message on stderr and on the status fd, and the program has not run.
// With serverArg it is a sandbox server, and returns when kz ends it.
func WrapperMain(args []string) int {
	if len(args) > 1 && args[1] == serverArg {
		return serverMain(args)
	}
	fd, err := wrapperExec(args)
	msg := fmt.Sprintf("%v; the command was not run", err)
	fmt.Fprintf(os.Stderr, "kz sandbox: %s\n", msg)
	if fd >= 0 {
		_, _ = unix.Write(fd, []byte(msg))
	}
	return wrapperExitCode
}

func wrapperExec(args []string) (statusFD int, err error) {
	statusFD = -1
	if !IsWrapperInvocation(args) {
		return statusFD, errors.New("not a sandbox invocation")
	}
	var writable []string
	rest := args[2:]
	for len(rest) > 0 && rest[0] != "--" {
		switch {
		case rest[0] == "--rw" && len(rest) > 1:
			writable = append(writable, rest[1])
		case rest[0] == "--status-fd" && len(rest) > 1:
			n, err := strconv.Atoi(rest[1])
			if err != nil || n < 3 {
				return statusFD, fmt.Errorf("bad status fd %q", rest[1])
			}
			statusFD = n
			// The command must not inherit it: its end tells kz that
			// the wrapper got as far as exec.
			unix.CloseOnExec(n)
		default:
			return statusFD, fmt.Errorf("bad wrapper argument %q", rest[0])
		}
		rest = rest[2:]
	}
	if len(rest) < 2 {
		return statusFD, errors.New("no command after --")
	}
	if len(writable) == 0 {
		return statusFD, errors.New("no writable directory given")
	}
	prog, argv := rest[1], rest[1:]
	path, err := exec.LookPath(prog)
	if err != nil {
		return statusFD, fmt.Errorf("find %s: %w", prog, err)
	}
	abi, err := landlockABI()
	if err != nil {
		return statusFD, fmt.Errorf("no Landlock: %w", err)
	}
	handled := uint64(landlockWriteV1)
	switch {
	case abi >= 3:
		handled = landlockWriteV3
	case abi == 2:
		handled = landlockWriteV2
	}

	// prctl, landlock_restrict_self and execve all apply to the calling
	// thread only, so they must run on one thread; execve then replaces
	// the whole process with that thread's confinement.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	rfd, err := landlockCreateRuleset(handled)
	if err != nil {
		return statusFD, err
	}
	defer func() { _ = syscall.Close(rfd) }()
	for _, d := range writable {
		if !filepath.IsAbs(d) {
			return statusFD, fmt.Errorf("writable path %q is not absolute", d)
		}
		if err := landlockAddPathRule(rfd, d, handled, true); err != nil {
			return statusFD, err
		}
	}
	for _, d := range landlockDevices {
		if err := landlockAddPathRule(rfd, d, handled, false); err != nil {
			return statusFD, err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return statusFD, fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := syscall.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); e != 0 {
		return statusFD, fmt.Errorf("landlock_restrict_self: %w", e)
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return statusFD, fmt.Errorf("exec %s: %w", path, err)
	}
	return statusFD, nil
}

func landlockCreateRuleset(handled uint64) (int, error) {
	// The ruleset attribute's first field, handled_access_fs, is the only
	// one kz sets, and the only one before ABI 4: passing that field alone
	// keeps older kernels happy. It is a uint64 of kz's own because
	// golang.org/x/sys renamed the struct's fields between versions.
	attr := handled
	size := unsafe.Sizeof(attr)
	r, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	return int(r), nil
}

// landlockAddPathRule allows the handled write rights beneath path (a
// directory) or on it (a file: only the rights a file can carry). A
// missing path is an error when required and skipped otherwise.
func landlockAddPathRule(rulesetFD int, path string, handled uint64, required bool) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if required {
			return fmt.Errorf("writable path %s: %w", path, err)
		}
		return nil
	}
	defer func() { _ = unix.Close(pfd) }()
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	access := handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= landlockFileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
	_, _, e := syscall.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, e)
	}
	return nil
}
