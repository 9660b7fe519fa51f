//go:build linux

package tools

// The optional OS sandbox for bash (issue 3, section 5): kz re-executes
// itself as a small wrapper that confines filesystem writes with Landlock
// and then execs the real command, so the shell and everything it starts
// can write only inside the workspace and the temp directories.
//
// We do not use Go-Landlock because its psx dependency, in a cgo build
// such as kz (SQLite), wraps pthread_create for the whole binary to reach
// every thread, and the wrapper does not need that: it restricts one
// locked OS thread and replaces the process with syscall.Exec from that
// same thread ("Case 2" of go-landlock's raw_syscalls_in_go.md), so no
// other thread ever runs unconfined code.
//
// Only writes are handled. Reads and execution stay with the permission
// gate: Landlock here is a filesystem write sandbox, not a network one
// (SECURITY.md: TCP rules are not reliable).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SandboxStatus says whether bash can be confined on this machine.
type SandboxStatus struct {
	// Available is true when the kernel supports Landlock and it is enabled.
	Available bool
	// ABI is the kernel's Landlock ABI version, 0 when unavailable.
	ABI int
	// Reason is one line for `kz runtimes`: what is confined, or why not.
	Reason string
}

// sandboxArg is argv[1] of kz re-executed as the sandbox wrapper. It cannot
// collide with a subcommand or a flag a person would type.
const sandboxArg = "__kz_landlock_sandbox"

// sandboxExitCode is the exit status of a wrapper that refused to run the
// command (like a shell's 126, "cannot execute"); the command never ran.
const sandboxExitCode = 126

// Write access rights by the ABI that introduced them. Read, execute and
// ioctl rights are deliberately not handled (see the file comment).
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

// sandboxDevices are character devices every shell writes to; they are
// writable in the sandbox when they exist.
var sandboxDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// sandboxWrapper returns the program and leading arguments that start kz as
// the wrapper. Tests replace it to run the test binary instead.
var sandboxWrapper = func() (string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: locate kz: %w", err)
	}
	return exe, []string{sandboxArg}, nil
}

// ProbeSandbox asks the kernel for its Landlock ABI version. It starts
// nothing and changes nothing.
func ProbeSandbox() SandboxStatus {
	abi, err := landlockABI()
	if err != nil {
		reason := "Landlock is not available: " + err.Error()
		switch {
		case errors.Is(err, syscall.ENOSYS):
			reason = "Landlock is not available: the kernel does not support it (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)"
		case errors.Is(err, syscall.EOPNOTSUPP):
			reason = "Landlock is not available: it is disabled at boot (add landlock to the lsm= kernel parameter)"
		}
		return SandboxStatus{Reason: reason + "; bash runs unconfined, only the permission gate applies"}
	}
	return SandboxStatus{Available: true, ABI: abi,
		Reason: fmt.Sprintf("Landlock ABI %d: bash can write only to the workspace and temp directories", abi)}
}

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

// IsSandboxInvocation reports whether args (os.Args) start kz as the
// sandbox wrapper. main calls it before anything else:
//
//	if tools.IsSandboxInvocation(os.Args) { os.Exit(tools.SandboxMain(os.Args)) }
func IsSandboxInvocation(args []string) bool {
	return len(args) > 1 && args[1] == sandboxArg
}

// SandboxCommand rewrites cmd, before it is started, so that it runs under
// the wrapper with writes confined to the writable directories (which must
// be absolute). Everything else about cmd (Dir, Env, stdio, SysProcAttr)
// is kept. It fails when Landlock is unavailable, so a caller that asked for
// the sandbox never silently gets none.
func SandboxCommand(cmd *exec.Cmd, writable []string) error {
	if cmd.Process != nil {
		return errors.New("sandbox: command already started")
	}
	if cmd.Err != nil {
		return fmt.Errorf("sandbox: %w", cmd.Err)
	}
	if st := ProbeSandbox(); !st.Available {
		return errors.New("sandbox: " + st.Reason)
	}
	if len(writable) == 0 {
		return errors.New("sandbox: no writable directory given")
	}
	exe, prefix, err := sandboxWrapper()
	if err != nil {
		return err
	}
	args := append([]string{exe}, prefix...)
	for _, d := range writable {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("sandbox: writable directory %q is not absolute", d)
		}
		args = append(args, "--rw", d)
	}
	args = append(args, "--", cmd.Path)
	if len(cmd.Args) > 1 {
		args = append(args, cmd.Args[1:]...)
	}
	cmd.Path = exe
	cmd.Args = args
	return nil
}

// SandboxMain is kz running as the wrapper: args are
// [kz, sandboxArg, --rw DIR..., --, PROGRAM, ARGS...]. It confines writes,
// then execs PROGRAM; it returns only on failure, with status 126 and a
// message on stderr, and the program has not run.
func SandboxMain(args []string) int {
	err := sandboxExec(args)
	fmt.Fprintf(os.Stderr, "kz sandbox: %v; the command was not run\n", err)
	return sandboxExitCode
}

func sandboxExec(args []string) error {
	if !IsSandboxInvocation(args) {
		return errors.New("not a sandbox invocation")
	}
	var writable []string
	rest := args[2:]
	for len(rest) > 0 && rest[0] != "--" {
		if rest[0] != "--rw" || len(rest) < 2 {
			return fmt.Errorf("bad wrapper argument %q", rest[0])
		}
		writable = append(writable, rest[1])
		rest = rest[2:]
	}
	if len(rest) < 2 {
		return errors.New("no command after --")
	}
	prog, argv := rest[1], rest[1:]
	path, err := exec.LookPath(prog)
	if err != nil {
		return fmt.Errorf("find %s: %w", prog, err)
	}
	abi, err := landlockABI()
	if err != nil {
		return fmt.Errorf("no Landlock: %w", err)
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

	fd, err := landlockCreateRuleset(handled)
	if err != nil {
		return err
	}
	defer func() { _ = syscall.Close(fd) }()
	for _, d := range writable {
		if err := landlockAddPathRule(fd, d, handled, true); err != nil {
			return err
		}
	}
	for _, d := range sandboxDevices {
		if err := landlockAddPathRule(fd, d, handled, false); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := syscall.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

func landlockCreateRuleset(handled uint64) (int, error) {
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	// Only the first field exists before ABI 4; passing the size of the
	// fields in use keeps older kernels happy.
	size := unsafe.Sizeof(attr.Access_fs)
	r, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	return int(r), nil
}

// landlockAddPathRule allows the handled write rights beneath path (a directory)
// or on it (a file: only the rights a file can carry). A missing path is
// an error when required and skipped otherwise.
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
