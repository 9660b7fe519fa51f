package patch

import (
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

// The compile-time proof that the workspace satisfies the applier's FS.
var (
	_ FS       = (*workspace.Workspace)(nil)
	_ DirMaker = (*workspace.Workspace)(nil)
)
