package app

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
)

// The store-backed snapshots: kz keeps the content a change overwrote in
// its store, so that undo works across restarts. patch and tools declare
// what they need (savers, loaders, the change log); these adapters are the
// only code that knows the store holds it.

// changeLog keeps one session's patch snapshots and applied changes in
// kz's store: the patch applier's snapshot saver and loader, and the
// change log patch.UndoLast works from.
type changeLog struct {
	st        *store.Store
	sessionID string
	// workspace is the absolute folder the applier writes in. It is
	// recorded with each snapshot, so that undo acts only where the change
	// was applied, and it lets SaveSnapshot tell which directories a new
	// file's change is about to create. Empty records no folder.
	workspace string
}

var (
	_ patch.SnapshotSaver = changeLog{}
	_ patch.ChangeLog     = changeLog{}
)

// SaveSnapshot implements patch.SnapshotSaver.
func (c changeLog) SaveSnapshot(ctx context.Context, sn patch.Snapshot) error {
	dirs := sn.CreatedDirs
	if dirs == nil && !sn.Existed && c.workspace != "" {
		dirs = missingParents(c.workspace, sn.Path)
	}
	return c.st.SaveSnapshot(ctx, store.Snapshot{SessionID: c.sessionID, ChangeID: sn.ChangeID, Path: sn.Path,
		Existed: sn.Existed, Content: sn.Content, Mode: sn.Mode, AfterExists: sn.AfterExists, AfterSHA256: sn.AfterSHA256,
		Workspace: c.workspace, CreatedDirs: dirs})
}

// missingParents returns the ancestors of rel (slash-separated, relative
// to root), parents first, that do not exist yet. Apply saves a file's
// snapshot before it writes anything, so these are exactly the directories
// its write will create. Anything that exists (a directory, a symlink, a
// file) stops the list: the change did not make it.
func missingParents(root, rel string) []string {
	var out []string
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		dir := rel[:i]
		if len(out) == 0 {
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir))); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		out = append(out, dir)
	}
	return out
}

// LoadSnapshots implements patch.SnapshotLoader.
func (c changeLog) LoadSnapshots(ctx context.Context, changeID string) ([]patch.Snapshot, error) {
	rows, err := c.st.Snapshots(ctx, changeID)
	if err != nil {
		return nil, err
	}
	out := make([]patch.Snapshot, 0, len(rows))
	for _, r := range rows {
		out = append(out, patch.Snapshot{ChangeID: r.ChangeID, Path: r.Path, Existed: r.Existed, Content: r.Content, Mode: r.Mode,
			AfterExists: r.AfterExists, AfterSHA256: r.AfterSHA256, CreatedDirs: r.CreatedDirs})
	}
	return out, nil
}

// LastChangeIn implements patch.ChangeLog.
func (c changeLog) LastChangeIn(ctx context.Context, root string) (string, error) {
	change, err := c.st.LastChangeOfSessionIn(ctx, c.sessionID, root)
	return change.ID, err
}

// ChangeFolders implements patch.ChangeLog.
func (c changeLog) ChangeFolders(ctx context.Context) ([]string, error) {
	return c.st.ChangeFolders(ctx, c.sessionID)
}

// ForgetChange implements patch.ChangeLog.
func (c changeLog) ForgetChange(ctx context.Context, changeID string) error {
	return c.st.DeleteChange(ctx, changeID)
}

// toolSnapshots saves the snapshots of the tools' writes in kz's store.
// Each tool write is its own change, named after its tool call.
type toolSnapshots struct{ st *store.Store }

// SaveSnapshot implements tools.SnapshotSaver.
func (s toolSnapshots) SaveSnapshot(ctx context.Context, sn tools.Snapshot) error {
	return s.st.SaveSnapshot(ctx, store.Snapshot{SessionID: sn.SessionID, ChangeID: "tool_" + sn.ToolCallID,
		ToolCallID: sn.ToolCallID, Path: sn.Path, Existed: sn.Existed, Content: sn.Content, Mode: sn.Mode})
}
