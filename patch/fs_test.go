package patch

import (
	"os"
	"testing"

	"github.com/kaizen-code/kz/tools/workspace"
)

// openWorkspace opens the real workspace (tools/workspace) the engine
// passes to the applier, so these tests exercise the production FS.
func openWorkspace(t testing.TB, dir string) *workspace.Workspace {
	t.Helper()
	w, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// The compile-time proof that the workspace satisfies the applier's FS
// and offers the os.Root the applier acts through.
var (
	_ FS                           = (*workspace.Workspace)(nil)
	_ interface{ Root() *os.Root } = (*workspace.Workspace)(nil)
	_ DirFS                        = (*memFS)(nil)
)
