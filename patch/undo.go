package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// Snapshot is one file's state before a change, saved before the first
// write so Undo can restore the exact previous bytes and mode. AfterExists
// and AfterSHA256 describe what the change left, so Undo can tell whether
// the file was edited again since.
type Snapshot struct {
	ChangeID    string      `json:"change_id"`
	Path        string      `json:"path"`
	Existed     bool        `json:"existed"`
	Content     []byte      `json:"content,omitempty"`
	Mode        fs.FileMode `json:"mode,omitempty"`
	AfterExists bool        `json:"after_exists"`
	AfterSHA256 string      `json:"after_sha256,omitempty"`
	// CreatedDirs are the directories, parents first, that did not exist
	// before the change and hold this (new) file; Undo removes those that
	// are empty once the file is gone. A saver that cannot tell leaves it
	// empty, and Undo then leaves every directory in place.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

// SnapshotSaver stores snapshots (the store implements it in SQLite).
type SnapshotSaver interface {
	SaveSnapshot(ctx context.Context, s Snapshot) error
}

// SnapshotLoader returns every snapshot of one change.
type SnapshotLoader interface {
	LoadSnapshots(ctx context.Context, changeID string) ([]Snapshot, error)
}

// ErrUndoConflict means a file of the change was modified after it; undo
// would destroy that later work, so it is refused. The error is an
// *UndoConflictError naming the files.
var ErrUndoConflict = errors.New("files changed after the change being undone")

// UndoConflictError is the refusal of an undo because files of the change
// were modified after it.
type UndoConflictError struct {
	ChangeID string
	Paths    []string
}

func (e *UndoConflictError) Error() string {
	them := "it"
	if len(e.Paths) > 1 {
		them = "them"
	}
	return fmt.Sprintf("cannot undo %s: %s changed after it, and undoing would overwrite those edits; "+
		"put %s back as the change left %s and undo again, or edit %s by hand",
		e.ChangeID, strings.Join(e.Paths, ", "), them, them, them)
}

// Is makes errors.Is(err, ErrUndoConflict) true.
func (e *UndoConflictError) Is(target error) bool { return target == ErrUndoConflict }

// ErrUnknownChange means no snapshots exist for the change id.
var ErrUnknownChange = errors.New("no snapshots for that change")

// Undo restores every file of change changeID to its exact previous bytes
// and mode (removing files the change created), all or none, under the
// same journal as Apply. It refuses with an *UndoConflictError when a file
// no longer holds what the change wrote. Directories the change created
// for its new files are removed afterwards when they are empty.
func (a *Applier) Undo(ctx context.Context, snaps SnapshotLoader, changeID string) error {
	if a.FS == nil || a.JournalDir == "" {
		return errors.New("patch: Undo needs FS and JournalDir")
	}
	list, err := snaps.LoadSnapshots(ctx, changeID)
	if err != nil {
		return fmt.Errorf("undo %s: %w", changeID, err)
	}
	if len(list) == 0 {
		return fmt.Errorf("undo %s: %w", changeID, ErrUnknownChange)
	}
	var olds, news []fileState
	var pins []pinnedPath
	var conflicts []string
	for _, s := range list {
		if _, err := CheckPath(s.Path); err != nil {
			return fmt.Errorf("undo %s: snapshot path %q: %w", changeID, s.Path, err)
		}
		// A snapshot names the file the change wrote, symlink-free; the
		// undo acts on that file, never on where a link swapped in since
		// leads.
		pin, p := a.pinExact(ctx, s.Path)
		if p != nil {
			return fmt.Errorf("undo %s: %s: %w", changeID, s.Path, problemError(p))
		}
		cur, err := a.readAt(pin)
		if err != nil {
			return fmt.Errorf("undo %s: %w", changeID, err)
		}
		if cur.Exists != s.AfterExists || (cur.Exists && SHA256Hex(cur.Content) != s.AfterSHA256) {
			conflicts = append(conflicts, s.Path)
		}
		olds, pins = append(olds, cur), append(pins, pin)
		news = append(news, fileState{Path: s.Path, Exists: s.Existed, Mode: s.Mode, Content: s.Content})
	}
	if len(conflicts) > 0 {
		return &UndoConflictError{ChangeID: changeID, Paths: conflicts}
	}
	created, err := a.createdDirs(olds, news, pins)
	if err != nil {
		return fmt.Errorf("undo %s: %w", changeID, err)
	}
	if err := a.commit(ctx, "undo_"+changeID, olds, news, pins, created); err != nil {
		return err
	}
	a.removeCreatedDirs(list)
	return nil
}

// removeCreatedDirs removes, deepest first, the directories the undone
// change created for its new files, each only if it is a real directory
// (not a symlink), reached without following links, and empty now. A
// directory that existed before the change is never in CreatedDirs, and
// one that holds anything (a file written since, by anyone) fails to be
// removed and stays; either way the undo itself has succeeded, so failures
// here are not errors.
func (a *Applier) removeCreatedDirs(list []Snapshot) {
	seen := map[string]bool{}
	var dirs []string
	for _, s := range list {
		if s.Existed {
			continue
		}
		for _, d := range s.CreatedDirs {
			// A recorded directory must be an ancestor of its file;
			// anything else is not the change's to remove.
			if _, err := CheckPath(d); err != nil || !strings.HasPrefix(s.Path, d+"/") || seen[d] {
				continue
			}
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	a.removeEmptyDirs(dirs)
}

// MemorySnapshots is an in-memory SnapshotSaver and SnapshotLoader for
// tests and for sessions without a store.
type MemorySnapshots struct {
	mu    sync.Mutex
	byID  map[string][]Snapshot
	order []string
}

// SaveSnapshot implements SnapshotSaver.
func (m *MemorySnapshots) SaveSnapshot(_ context.Context, s Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string][]Snapshot{}
	}
	if _, ok := m.byID[s.ChangeID]; !ok {
		m.order = append(m.order, s.ChangeID)
	}
	s.Content = append([]byte(nil), s.Content...)
	m.byID[s.ChangeID] = append(m.byID[s.ChangeID], s)
	return nil
}

// LoadSnapshots implements SnapshotLoader.
func (m *MemorySnapshots) LoadSnapshots(_ context.Context, id string) ([]Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]Snapshot(nil), m.byID[id]...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Last returns the most recent change id, or "".
func (m *MemorySnapshots) Last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.order) == 0 {
		return ""
	}
	return m.order[len(m.order)-1]
}
