package patch

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/tools/sandbox"
)

func TestMain(m *testing.M) {
	// VERIFY commands run on sandbox servers, which are this binary.
	if sandbox.IsWrapperInvocation(os.Args) {
		os.Exit(sandbox.WrapperMain(os.Args))
	}
	if crashChild(m) {
		return
	}
	goleak.VerifyTestMain(m)
}
