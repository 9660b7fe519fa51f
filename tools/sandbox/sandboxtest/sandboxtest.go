// Package sandboxtest holds what tests of kz's sandboxed processes share.
package sandboxtest

import (
	"os"
	"testing"

	"github.com/kaizen-code/kz/tools/sandbox"
)

// RequireBubblewrap skips the test where bubblewrap cannot run, and fails
// it there when KZ_REQUIRE_SANDBOX is set (CI must prove the profiles,
// not skip them).
func RequireBubblewrap(t testing.TB) {
	t.Helper()
	if st := sandbox.Probe(); st.Kind != sandbox.KindBubblewrap {
		if os.Getenv("KZ_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no bubblewrap here: %s", st.Reason)
		}
		t.Skipf("no bubblewrap here: %s", st.Reason)
	}
}

// New returns a sandbox of the workspace ws, where bubblewrap runs
// (RequireBubblewrap), closed when the test ends.
func New(t testing.TB, ws string) *sandbox.Sandbox {
	t.Helper()
	RequireBubblewrap(t)
	sb, err := sandbox.New(sandbox.Policy{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}
