package app

import (
	"context"
	"path/filepath"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/workspace"
)

// applier is the patch applier of a session in ws: the content a change
// overwrites is kept in the store, and its journal lives in kz's data
// directory, outside the workspace.
func (e *Env) applier(ws *workspace.Workspace, st *store.Store, sessionID string) *patch.Applier {
	return &patch.Applier{FS: ws, Snapshots: changeLog{st: st, sessionID: sessionID, workspace: ws.Dir()},
		JournalDir: filepath.Join(e.DataDir, "journal"), Root: ws.Dir()}
}

// Undo restores every file of the newest change of a session applied in
// ws to its exact previous bytes, and says what it restored (kz undo, and
// /undo in the TUI). It refuses with a *patch.FolderMismatchError when the
// session's changes were all applied in other folders.
func (e *Env) Undo(ctx context.Context, st *store.Store, ws *workspace.Workspace, sessionID string) (string, error) {
	return patch.UndoLast(ctx, e.applier(ws, st, sessionID), changeLog{st: st, sessionID: sessionID, workspace: ws.Dir()}, sessionID)
}

// undoer is /undo in the TUI: the same as kz undo, for this session.
type undoer struct {
	e         *Env
	st        *store.Store
	ws        *workspace.Workspace
	sessionID string
	// sess takes the conversation back for /rewind; nil offers no
	// conversation rewind.
	sess rewindSession
}

// UndoLast implements tui.Undoer: the newest change of any kind, as kz
// undo.
func (u undoer) UndoLast(ctx context.Context) (string, error) {
	return u.e.UndoAny(ctx, u.st, u.ws, u.sessionID)
}

// RevertChange undoes an older change of this session from the change log
// (tui.ChangeReverter), as a new change /undo can take back.
func (u undoer) RevertChange(ctx context.Context, files []engine.FileChange) (string, error) {
	return patch.RevertChange(ctx, u.e.applier(u.ws, u.st, u.sessionID), files)
}
