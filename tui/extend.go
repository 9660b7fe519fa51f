package tui

import (
	"context"

	"github.com/kaizen-code/kz/engine"
)

// Undoer undoes the last change applied in the session, restoring every
// file of it from the store's snapshots, and says what it restored.
// internal/app implements it over patch.UndoLast and the store.
type Undoer interface {
	UndoLast(ctx context.Context) (string, error)
}

// SessionStore is what the session picker needs from the store;
// *store.Store implements it.
type SessionStore interface {
	ListSessions(ctx context.Context, workspace string, limit int) ([]engine.SessionInfo, error)
	DeleteSession(ctx context.Context, id string) error
}

// SessionRenamer is implemented by a SessionStore that can rename
// sessions; the picker offers renaming only then. The store does not have
// it yet: the wanted method is RenameSession(ctx, id, title string) error,
// failing with store.ErrNotFound for an unknown id.
type SessionRenamer interface {
	RenameSession(ctx context.Context, id, title string) error
}

// ResumeRequest is returned by Run when the person chose another session
// in the picker: the caller closes this session and runs the TUI again on
// SessionID with its transcript restored.
type ResumeRequest struct {
	SessionID string
}

func (r *ResumeRequest) Error() string { return "resume session " + r.SessionID }

// extensions are the optional services of Options.
type extensions struct {
	undo      Undoer
	sessions  SessionStore
	files     FileLister
	workspace string
	grants    GrantManager
	mentions  MentionReader
	memory    MemoryBook
	reasoning ReasoningSetter
	setup     SetupService
	mcp       MCPLister
}
