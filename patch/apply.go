package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
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
// no file changed since Validate, reading each through the path Validate
// pinned (a symbolic link or another directory swapped in on the way
// refuses the whole plan, ErrChanged), saves a snapshot of every touched
// file's previous state, journals the change, then writes each file
// atomically through the same pinned paths. If any write fails, the files
// already written are restored from the journal; if the process dies,
// Recover restores them on the next start.
func (a *Applier) Apply(ctx context.Context, plan *Plan) (*Result, error) {
	if a.FS == nil || a.Snapshots == nil || a.JournalDir == "" {
		return nil, errors.New("patch: Apply needs FS, Snapshots and JournalDir")
	}
	if plan == nil || len(plan.Files) == 0 {
		return nil, errors.New("patch: empty plan")
	}
	var olds, news []fileState
	var pins []pinnedPath
	for _, f := range plan.Files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		// A plan's paths are acted on only as Validate (or RevertChange)
		// judged and pinned them; a plan assembled by hand has no pins.
		if !f.pin.valid() || (f.Operation == OpRename && !f.newPin.valid()) {
			return nil, fmt.Errorf("patch: %s was not validated by the applier (use Validate)", f.Path)
		}
		cur, err := a.readAt(f.pin)
		if err != nil {
			return nil, refusal(f.Path, err)
		}
		if cur.Exists != f.Existed || (f.Existed && (!bytes.Equal(cur.Content, f.OldContent) || cur.Mode != f.OldMode)) {
			return nil, &ValidationError{Problems: []Problem{{Path: f.Path, Edit: -1, Kind: RefusedStale, Message: "the file changed after the proposal was validated; validate it again"}}}
		}
		olds, pins = append(olds, cur), append(pins, f.pin)
		switch f.Operation {
		case OpDelete:
			news = append(news, fileState{Path: cur.Path})
		case OpRename:
			target, err := a.readAt(f.newPin)
			if err != nil {
				return nil, refusal(f.NewPath, err)
			}
			if target.Exists {
				return nil, &ValidationError{Problems: []Problem{{Path: f.NewPath, Edit: -1, Kind: RefusedExists, Message: "the rename target appeared after validation"}}}
			}
			olds, pins = append(olds, target), append(pins, f.newPin)
			news = append(news, fileState{Path: target.Path, Exists: true, Mode: f.NewMode, Content: f.NewContent}, fileState{Path: cur.Path})
		default:
			news = append(news, fileState{Path: cur.Path, Exists: true, Mode: f.NewMode, Content: f.NewContent})
		}
	}
	created, err := a.createdDirs(olds, news, pins)
	if err != nil {
		return nil, err
	}
	for i, o := range olds {
		after := stateOf(news, o.Path)
		s := Snapshot{ChangeID: plan.ChangeID, Path: o.Path, Existed: o.Exists, Content: o.Content, Mode: o.Mode, AfterExists: after.Exists, CreatedDirs: created[i]}
		if after.Exists {
			s.AfterSHA256 = SHA256Hex(after.Content)
		}
		if err := a.Snapshots.SaveSnapshot(ctx, s); err != nil {
			return nil, fmt.Errorf("apply: save snapshot of %s: %w", o.Path, err)
		}
	}
	if err := a.commit(ctx, plan.ChangeID, olds, news, pins, created); err != nil {
		return nil, err
	}
	res := &Result{ChangeID: plan.ChangeID}
	for _, p := range pins {
		res.Paths = append(res.Paths, p.rel)
	}
	return res, nil
}

// refusal reports a pinned path that cannot be acted on any more, before
// anything was written.
func refusal(rel string, err error) error {
	p := problemOf(err, "cannot inspect the path")
	p.Path, p.Edit = rel, -1
	if p.Kind == RefusedChanged {
		p.Message += "; validate the proposal again"
	}
	return &ValidationError{Problems: []Problem{*p}}
}

// createdDirs returns, for each path a commit creates, the directories
// (resolved paths, parents first) its write will create; nil for the
// others. Snapshots record them so Undo removes them again, and the
// journal so a rollback does. The list is never nil for a created file,
// so a SnapshotSaver does not work it out again by path.
func (a *Applier) createdDirs(olds, news []fileState, pins []pinnedPath) ([][]string, error) {
	out := make([][]string, len(olds))
	for i, o := range olds {
		if o.Exists || !stateOf(news, o.Path).Exists {
			continue
		}
		dirs, err := a.missingDirs(pins[i])
		if err != nil {
			return nil, refusal(pins[i].rel, err)
		}
		out[i] = dirs
	}
	return out, nil
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

// commit moves every path from its old to its new state under a journal,
// acting on each through its pin (pins[i] is olds[i]'s path). Writes come
// before removals, so a rename never has a moment where the content exists
// nowhere.
func (a *Applier) commit(ctx context.Context, id string, olds, news []fileState, pins []pinnedPath, created [][]string) error {
	root, err := a.root()
	if err != nil {
		return err
	}
	j := &journal{Version: 1, ChangeID: id, Root: root}
	for i, o := range olds {
		n := stateOf(news, o.Path)
		e := journalEntry{Old: o, NewExists: n.Exists, NewMode: n.Mode, CreatedDirs: created[i]}
		if n.Exists {
			e.NewSHA256 = SHA256Hex(n.Content)
		}
		j.Entries = append(j.Entries, e)
	}
	jpath, err := writeJournal(a.JournalDir, j)
	if err != nil {
		return fmt.Errorf("apply: write journal: %w", err)
	}
	if a.beforeWrites != nil {
		a.beforeWrites()
	}
	// touched marks the entries whose change may have become visible; a
	// rollback in this process restores those and leaves the others, which
	// it could not even read when their path was swapped.
	touched := make([]atomic.Bool, len(j.Entries))
	// New contents are written concurrently (each write is atomic and
	// independent, and most of its time is fsync, which the file system
	// batches); removals follow, one by one, once every write succeeded.
	var step atomic.Int64
	do := func(i int, n fileState) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.writeState(pins[i], n, func() { touched[i].Store(true) }); err != nil {
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
	for i, e := range j.Entries {
		n := stateOf(news, e.Old.Path)
		if n.Exists {
			g.Go(func() error { return do(i, n) })
		}
	}
	werr := g.Wait()
	for i, e := range j.Entries {
		n := stateOf(news, e.Old.Path)
		if n.Exists || werr != nil {
			continue
		}
		werr = do(i, n)
	}
	if werr != nil {
		done := make([]bool, len(touched))
		for i := range touched {
			done[i] = touched[i].Load()
		}
		if rerr := a.rollback(j, pins, done); rerr != nil {
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

// writeState puts one pinned path into its new state: an atomic write
// with exactly the new mode, or a removal. visible runs right before the
// change becomes visible.
func (a *Applier) writeState(p pinnedPath, n fileState, visible func()) error {
	if !n.Exists {
		if err := a.removeFile(p, visible); err != nil {
			return fmt.Errorf("remove %s: %w", p.rel, err)
		}
		return nil
	}
	if err := a.putFile(p, n.Content, n.Mode, visible); err != nil {
		return fmt.Errorf("write %s: %w", p.rel, err)
	}
	return nil
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

// rollback restores journaled paths to their old state, acting on each
// through its pin (pins[i] for entry i). With touched set, only the
// entries whose change may have become visible are restored. A path whose
// current content is neither the old nor the new one was changed by
// someone else; it is left alone and reported. Directories the change
// created are removed again when they are empty.
func (a *Applier) rollback(j *journal, pins []pinnedPath, touched []bool) error {
	var errs []error
	for i, e := range j.Entries {
		p := pins[i]
		if e.Temp != "" {
			a.removeTempAt(p, e.Temp)
		}
		a.removeOrphanTemps(p)
		if touched != nil && !touched[i] {
			continue
		}
		cur, err := a.readAt(p)
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
		if err := a.writeState(p, e.Old, nil); err != nil {
			errs = append(errs, err)
		}
	}
	var dirs []string
	for _, e := range j.Entries {
		dirs = append(dirs, e.CreatedDirs...)
	}
	a.removeEmptyDirs(dirs)
	return errors.Join(errs...)
}

// removeEmptyDirs removes the listed directories (recorded, symlink-free
// paths) that are real and empty, deepest first.
func (a *Applier) removeEmptyDirs(dirs []string) {
	dirs = slices.Clone(dirs)
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	// Deeper paths have more separators; remove them before their parents.
	sort.SliceStable(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		a.removeEmptyDir(d)
	}
}
