//go:build !linux

package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
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

const sandboxArg = "__kz_landlock_sandbox"

// sandboxWrapper mirrors the Linux hook so tests build everywhere; nothing
// here runs a wrapper.
var sandboxWrapper = func() (string, []string, error) {
	return "", nil, errors.New("sandbox: " + ProbeSandbox().Reason)
}

// ProbeSandbox reports that Landlock exists only on Linux.
func ProbeSandbox() SandboxStatus {
	return SandboxStatus{Reason: "Landlock is Linux-only; bash runs unconfined, only the permission gate applies"}
}

// IsSandboxInvocation reports whether args start kz as the sandbox wrapper.
func IsSandboxInvocation(args []string) bool { return len(args) > 1 && args[1] == sandboxArg }

// SandboxCommand always fails here: there is no sandbox to run under.
func SandboxCommand(cmd *exec.Cmd, writable []string) error {
	return errors.New("sandbox: " + ProbeSandbox().Reason)
}

// SandboxMain refuses to run anything without the sandbox.
func SandboxMain(args []string) int {
	fmt.Fprintln(os.Stderr, "kz sandbox: "+ProbeSandbox().Reason+"; the command was not run")
	return 126
}
