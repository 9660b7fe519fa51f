package tools

// Test helpers for the sandbox shared by sandbox_test.go (Linux only) and
// bash_test.go (every platform: it skips where Landlock is unavailable).

import (
	"os"
	"slices"
	"testing"
)

// sandboxHelperEnv marks the test binary re-executed as the sandbox
// wrapper (the role kz itself plays through IsSandboxInvocation).
const sandboxHelperEnv = "KZ_TOOLS_SANDBOX_HELPER"

// TestSandboxHelperProcess is not a test: it is the wrapper's entry point
// when the test binary is started by SandboxCommand with the environment
// variable set. It never returns normally (exec or exit).
func TestSandboxHelperProcess(t *testing.T) {
	if os.Getenv(sandboxHelperEnv) != "1" {
		t.Skip("helper process entry point")
	}
	i := slices.Index(os.Args, sandboxArg)
	if i < 0 {
		os.Exit(99)
	}
	os.Exit(SandboxMain(append([]string{os.Args[0]}, os.Args[i:]...)))
}

// useSandboxTestWrapper makes SandboxCommand start this test binary as the wrapper.
func useSandboxTestWrapper(t *testing.T) {
	t.Helper()
	old := sandboxWrapper
	sandboxWrapper = func() (string, []string, error) {
		return os.Args[0], []string{"-test.run=^TestSandboxHelperProcess$", "--", sandboxArg}, nil
	}
	t.Cleanup(func() { sandboxWrapper = old })
}

func requireSandbox(t *testing.T) SandboxStatus {
	t.Helper()
	st := ProbeSandbox()
	if !st.Available {
		t.Skip(st.Reason)
	}
	return st
}
