package patch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// journal is the on-disk record of an in-flight change: every touched
// path's complete old state and a hash of its new state. It exists only
// while files are being written; finding one at start-up means a crash.
// Its paths are the resolved, symlink-free paths that were written, so a
// recovery walks them without following any link: one swapped in after
// the crash makes the recovery fail (and keep the journal) instead of
// writing where it leads.
type journal struct {
	Version  int            `json:"version"`
	ChangeID string         `json:"change_id"`
	Root     string         `json:"root"`
	Entries  []journalEntry `json:"entries"`
}

type journalEntry struct {
	Old       fileState   `json:"old"`
	NewExists bool        `json:"new_exists"`
	NewSHA256 string      `json:"new_sha256,omitempty"`
	NewMode   fs.FileMode `json:"new_mode,omitempty"`
	// Temp is the temporary name an older version used for a
	// mode-changing write; a rollback removes it. Writes now set the mode
	// of their own temporary file.
	Temp string `json:"temp,omitempty"`
	// CreatedDirs are the directories (parents first) the write of a new
	// file creates; a rollback removes them again when they are empty.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

const journalSuffix = ".patch-journal.json"

// writeJournal writes j durably (temp file, fsync, rename, fsync dir).
func writeJournal(dir string, j *journal) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	data, err := json.Marshal(j)
	if err != nil {
		return "", err
	}
	final := filepath.Join(dir, j.ChangeID+journalSuffix)
	tmp, err := os.CreateTemp(dir, ".journal-*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, syncDir(dir)
}

func removeJournal(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(p))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// Recover finds journals of changes interrupted by a crash in this
// workspace and restores their files to the state before the change, so
// every change is all-or-none. It returns the recovered change ids. Call it
// at start-up, before any new change.
func (a *Applier) Recover(ctx context.Context) ([]string, error) {
	if a.JournalDir == "" {
		return nil, errors.New("patch: Recover needs JournalDir")
	}
	root, err := a.root()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(a.JournalDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	var ids []string
	var errs []error
	for _, de := range entries {
		if err := ctx.Err(); err != nil {
			return ids, fmt.Errorf("recover: %w", err)
		}
		if !strings.HasSuffix(de.Name(), journalSuffix) {
			continue
		}
		p := filepath.Join(a.JournalDir, de.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("read journal %s: %w", p, err))
			continue
		}
		var j journal
		if err := json.Unmarshal(data, &j); err != nil {
			errs = append(errs, fmt.Errorf("journal %s is unreadable: %w", p, err))
			continue
		}
		if j.Root != root {
			continue
		}
		if err := checkJournalPaths(&j); err != nil {
			errs = append(errs, fmt.Errorf("journal %s: %w", p, err))
			continue
		}
		pins := make([]pinnedPath, len(j.Entries))
		for i, e := range j.Entries {
			pins[i] = unpinned(e.Old.Path)
		}
		if err := a.rollback(&j, pins, nil); err != nil {
			errs = append(errs, fmt.Errorf("recover change %s: %w", j.ChangeID, err))
			continue
		}
		if err := removeJournal(p); err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, j.ChangeID)
	}
	return ids, errors.Join(errs...)
}

// checkJournalPaths refuses a journal naming a path the applier would
// never write: the journal lives outside the workspace, but is still input.
func checkJournalPaths(j *journal) error {
	for _, e := range j.Entries {
		if _, err := CheckPath(e.Old.Path); err != nil {
			return fmt.Errorf("bad path %q: %w", e.Old.Path, err)
		}
		if e.Temp != "" {
			if _, err := CheckPath(e.Temp); err != nil {
				return fmt.Errorf("bad temp path %q: %w", e.Temp, err)
			}
		}
		for _, d := range e.CreatedDirs {
			if _, err := CheckPath(d); err != nil || !strings.HasPrefix(e.Old.Path, d+"/") {
				return fmt.Errorf("bad created directory %q of %q", d, e.Old.Path)
			}
		}
	}
	return nil
}
