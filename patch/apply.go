package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Result reports an applied change. The diffs were shown before Apply
// (Preview); Result only names what was written.
type Result struct {
	ChangeID string `json:"change_id"`
	// Paths are the touched paths (both sides of a rename), in plan order.
	Paths []string `json:"paths"`
}

// fileState is one path's complete state: present with content and mode,
// or absent.
type fileState struct {
	Path    string      `json:"path"`
	Exists  bool        `json:"exists"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	Content []byte      `json:"content,omitempty"`
	SHA256  string      `json:"sha256,omitempty"`
}

// Apply writes a validated plan: all files or none. It first checks that
// no file changed since Validate, saves a snapshot of every touched file's
// previous state, journals the change, then writes each file atomically.
// If any write fails, the files already written are restored from the
// journal; if the process dies, Recover restores them on the next start.
func (a *Applier) Apply(ctx context.Context, plan *Plan) (*Result, error) {
	if a.FS == nil || a.Snapshots == nil || a.JournalDir == "" {
		return nil, errors.New("patch: Apply needs FS, Snapshots and JournalDir")
	}
	if plan == nil || len(plan.Files) == 0 {
		return nil, errors.New("patch: empty plan")
	}
	var olds, news []fileState
	for _, f := range plan.Files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		cur, err := a.current(f.Path)
		if err != nil {
			return nil, err
		}
		if cur.Exists != f.Existed || (f.Existed && (!bytes.Equal(cur.Content, f.OldContent) || cur.Mode != f.OldMode)) {
			return nil, &ValidationError{Problems: []Problem{{Path: f.Path, Edit: -1, Kind: RefusedStale, Message: "the file changed after the proposal was validated; validate it again"}}}
		}
		olds = append(olds, cur)
		switch f.Operation {
		case OpDelete:
			news = append(news, fileState{Path: f.Path})
		case OpRename:
			target, err := a.current(f.NewPath)
			if err != nil {
				return nil, err
			}
			if target.Exists {
				return nil, &ValidationError{Problems: []Problem{{Path: f.NewPath, Edit: -1, Kind: RefusedExists, Message: "the rename target appeared after validation"}}}
			}
			olds = append(olds, target)
			news = append(news, fileState{Path: f.NewPath, Exists: true, Mode: f.NewMode, Content: f.NewContent}, fileState{Path: f.Path})
		default:
			news = append(news, fileState{Path: f.Path, Exists: true, Mode: f.NewMode, Content: f.NewContent})
		}
	}
	for _, o := range olds {
		after := stateOf(news, o.Path)
		s := Snapshot{ChangeID: plan.ChangeID, Path: o.Path, Existed: o.Exists, Content: o.Content, Mode: o.Mode, AfterExists: after.Exists}
		if after.Exists {
			s.AfterSHA256 = SHA256Hex(after.Content)
		}
		if err := a.Snapshots.SaveSnapshot(ctx, s); err != nil {
			return nil, fmt.Errorf("apply: save snapshot of %s: %w", o.Path, err)
		}
	}
	if err := a.commit(ctx, plan.ChangeID, olds, news); err != nil {
		return nil, err
	}
	res := &Result{ChangeID: plan.ChangeID}
	for _, o := range olds {
		res.Paths = append(res.Paths, o.Path)
	}
	return res, nil
}

// writeConcurrency bounds the parallel file writes of one commit.
const writeConcurrency = 16

func stateOf(states []fileState, p string) fileState {
	for _, s := range states {
		if s.Path == p {
			return s
		}
	}
	return fileState{Path: p}
}

// current reads a path's state now.
func (a *Applier) current(rel string) (fileState, error) {
	info, err := a.FS.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{Path: rel}, nil
	}
	if err != nil {
		return fileState{}, fmt.Errorf("inspect %s: %w", rel, err)
	}
	if !info.Mode().IsRegular() {
		return fileState{}, fmt.Errorf("%s is not a regular file", rel)
	}
	b, rinfo, err := a.FS.ReadFile(rel, a.maxBytes())
	if err != nil {
		return fileState{}, fmt.Errorf("read %s: %w", rel, err)
	}
	return fileState{Path: rel, Exists: true, Mode: rinfo.Mode().Perm(), Content: b}, nil
}

// commit moves every path from its old to its new state under a journal.
// Writes come before removals, so a rename never has a moment where the
// content exists nowhere.
func (a *Applier) commit(ctx context.Context, id string, olds, news []fileState) error {
	root, err := a.root()
	if err != nil {
		return err
	}
	j := &journal{Version: 1, ChangeID: id, Root: root}
	for _, o := range olds {
		n := stateOf(news, o.Path)
		e := journalEntry{Old: o, NewExists: n.Exists, NewMode: n.Mode}
		if n.Exists {
			e.NewSHA256 = SHA256Hex(n.Content)
		}
		if n.Exists && o.Exists && n.Mode != o.Mode {
			e.Temp = tempName(o.Path, id)
		}
		j.Entries = append(j.Entries, e)
	}
	jpath, err := writeJournal(a.JournalDir, j)
	if err != nil {
		return fmt.Errorf("apply: write journal: %w", err)
	}
	// New contents are written concurrently (each write is atomic and
	// independent, and most of its time is fsync, which the file system
	// batches); removals follow, one by one, once every write succeeded.
	var step atomic.Int64
	do := func(e journalEntry, n fileState) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.writeState(e, n); err != nil {
			return err
		}
		s := step.Add(1)
		if a.afterWrite != nil {
			a.afterWrite(int(s))
		}
		return nil
	}
	var g errgroup.Group
	g.SetLimit(writeConcurrency)
	for _, e := range j.Entries {
		n := stateOf(news, e.Old.Path)
		if n.Exists {
			g.Go(func() error { return do(e, n) })
		}
	}
	werr := g.Wait()
	for _, e := range j.Entries {
		n := stateOf(news, e.Old.Path)
		if n.Exists || werr != nil {
			continue
		}
		werr = do(e, n)
	}
	if werr != nil {
		if rerr := a.rollback(j); rerr != nil {
			return fmt.Errorf("apply failed (%w) and rollback failed: %v; the journal %s is kept for Recover", werr, rerr, jpath)
		}
		_ = removeJournal(jpath)
		return fmt.Errorf("apply: %w (all files restored)", werr)
	}
	if err := removeJournal(jpath); err != nil {
		return fmt.Errorf("apply: change written but journal not removed: %w", err)
	}
	return nil
}

// writeState puts one path into its new state. A mode change on an
// existing file goes through a temp file and a rename, since WriteFile
// keeps an existing file's mode.
func (a *Applier) writeState(e journalEntry, n fileState) error {
	if !n.Exists {
		if err := a.FS.Remove(n.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", n.Path, err)
		}
		return nil
	}
	if !e.Old.Exists {
		if err := a.mkdirParent(n.Path); err != nil {
			return err
		}
	}
	if e.Temp != "" {
		if err := a.FS.WriteFile(e.Temp, n.Content, n.Mode); err != nil {
			return fmt.Errorf("write %s: %w", e.Temp, err)
		}
		if err := a.FS.Rename(e.Temp, n.Path); err != nil {
			return fmt.Errorf("rename %s: %w", n.Path, err)
		}
		return nil
	}
	if err := a.FS.WriteFile(n.Path, n.Content, n.Mode); err != nil {
		return fmt.Errorf("write %s: %w", n.Path, err)
	}
	return nil
}

func (a *Applier) mkdirParent(rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	if _, err := a.FS.Lstat(dir); err == nil {
		return nil
	}
	dm, ok := a.FS.(DirMaker)
	if !ok {
		return fmt.Errorf("create %s: directory %s does not exist and the workspace cannot create directories", rel, dir)
	}
	if err := dm.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	return nil
}

func tempName(rel, id string) string {
	dir, base := path.Split(rel)
	return dir + ".kz-patch-" + id + "-" + base + ".tmp"
}

func (a *Applier) root() (string, error) {
	if a.Root != "" {
		return a.Root, nil
	}
	if d, ok := a.FS.(interface{ Dir() string }); ok {
		return d.Dir(), nil
	}
	r, err := a.FS.Resolve(".")
	if err != nil {
		return "", fmt.Errorf("resolve workspace root: %w", err)
	}
	if !filepath.IsAbs(r) {
		return "", errors.New("patch: set Applier.Root to the workspace's absolute path (journals name their workspace)")
	}
	return r, nil
}

// rollback restores every journaled path to its old state. A path whose
// current content is neither the old nor the new one was changed by
// someone else; it is left alone and reported.
func (a *Applier) rollback(j *journal) error {
	var errs []error
	for _, e := range j.Entries {
		if e.Temp != "" {
			_ = a.FS.Remove(e.Temp)
		}
		a.removeOrphanTemps(e.Old.Path)
		cur, err := a.current(e.Old.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cur.Exists == e.Old.Exists && (!cur.Exists || (bytes.Equal(cur.Content, e.Old.Content) && cur.Mode == e.Old.Mode)) {
			continue
		}
		isNew := cur.Exists == e.NewExists && (!cur.Exists || SHA256Hex(cur.Content) == e.NewSHA256)
		if !isNew {
			errs = append(errs, fmt.Errorf("%s was changed by something else; left as it is", e.Old.Path))
			continue
		}
		restore := journalEntry{Old: cur}
		if cur.Exists && e.Old.Exists && cur.Mode != e.Old.Mode {
			restore.Temp = tempName(e.Old.Path, j.ChangeID+"-rb")
		}
		if err := a.writeState(restore, e.Old); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// workspaceTempPrefix is the prefix tools/workspace gives its write temps
// (".kz-tmp-<base>-<16 hex>"). A process killed during WriteFile leaves one
// behind; since the journal proves a kz write to that path was in flight,
// its temps are removed on rollback.
const workspaceTempPrefix = ".kz-tmp-"

func (a *Applier) removeOrphanTemps(rel string) {
	rd, ok := a.FS.(interface {
		ReadDir(rel string) ([]fs.DirEntry, error)
	})
	if !ok {
		return
	}
	dir, base := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	ents, err := rd.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := workspaceTempPrefix + base + "-"
	for _, de := range ents {
		name := de.Name()
		suffix, ok := strings.CutPrefix(name, prefix)
		if !ok || len(suffix) != 16 || strings.Trim(suffix, "0123456789abcdef") != "" || !de.Type().IsRegular() {
			continue
		}
		_ = a.FS.Remove(path.Join(dir, name))
	}
}
