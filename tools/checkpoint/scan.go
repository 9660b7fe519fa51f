package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
)

// candidate is a file the stat scan saw differ from the baseline.
type candidate struct {
	rel  string
	stat tools.FileStat
}

// scanKind says what a scan may rely on.
type scanKind string

const (
	// scanFull looks at every file (a turn's start, a refresh).
	scanFull scanKind = "full"
	// scanCall is the scan after a call: only the files the change
	// watcher names, when it can name them all.
	scanCall scanKind = "call"
	// scanTurnEnd is a turn's end: what scanCall looks at and the files
	// a live process holds for writing, when Options.WriteHeld can tell.
	scanTurnEnd scanKind = "turn end"
)

// scan brings the baseline up to date without recording a checkpoint.
func (t *Tracker) scan(ctx context.Context, pre map[string]state) (int, error) {
	return t.scanInto(ctx, pre, nil, scanFull)
}

// scanInto scans the workspace, reads the files whose stat differs from
// the baseline, and commits, in one transaction, the content it read, the
// baseline's new state and (when cp is set and something changed) cp with
// every file whose content, existence or mode changed. pre is the state
// before the call of the paths predicted for it; it takes precedence over
// the baseline, and it is the only record of an ignored file. The
// in-memory baseline moves only once the commit succeeded, so a failed
// commit is found again by the next scan.
func (t *Tracker) scanInto(ctx context.Context, pre map[string]state, cp *Checkpoint, kind scanKind) (int, error) {
	if err := t.load(ctx); err != nil {
		return 0, err
	}
	start := t.opt.Now().UnixNano()
	var cands []candidate
	var seen map[string]bool
	truncated, partial := false, false
	if kind != scanFull {
		cands, seen, partial = t.watchedChanges(kind)
	}
	if !partial {
		t.fullScans++
		t.linked = 0
		seen = make(map[string]bool, len(t.base)+8)
		if t.watch != nil {
			t.watch.FullScanStarted()
		}
		opt := tools.ScanOptions{MaxFiles: t.opt.MaxFiles, Watch: t.watch, Skip: t.own}
		err := tools.ScanWorkspaceWith(ctx, t.opt.WS, opt, func(rel string, st tools.FileStat) {
			if permission.IsCredentialPath(rel) {
				return
			}
			seen[rel] = true
			if st.Links > 1 {
				t.linked++
			}
			if e, ok := t.base[rel]; ok && !e.racy && e.stat.SameAs(st) {
				return
			}
			cands = append(cands, candidate{rel: rel, stat: st})
		})
		truncated = errors.Is(err, tools.ErrScanTruncated)
		if err != nil && !truncated {
			return 0, fmt.Errorf("checkpoint: %w", err)
		}
		t.lastTruncated = truncated
	}
	var files []FileChange
	upserts := map[string]entry{}
	var deletes []string
	for _, c := range cands {
		after, err := t.read(c.rel)
		if err != nil {
			return 0, err
		}
		before := t.before(c.rel, pre)
		if changed(before, after) {
			files = append(files, change(c.rel, before, after))
		}
		upserts[c.rel] = entry{stat: c.stat, sha: after.sha, racy: c.stat.MtimeNs >= start-racyWindow.Nanoseconds()}
	}
	if !truncated {
		// A truncated scan did not see every file: one it missed is not
		// gone. A partial one (the watcher's) looked only at the files
		// it lists in seen: one of those that is gone is gone.
		for rel := range t.base {
			if present, looked := seen[rel]; present || (partial && !looked) {
				continue
			}
			before := t.before(rel, pre)
			if before.exists {
				files = append(files, change(rel, before, state{kept: true}))
			}
			deletes = append(deletes, rel)
		}
	}
	// Predicted paths the scan cannot see (ignored files) are compared
	// directly; they never join the baseline.
	for rel, before := range pre {
		if _, inBase := t.base[rel]; inBase || seen[rel] {
			continue
		}
		after, err := t.read(rel)
		if err != nil {
			return 0, err
		}
		if changed(before, after) {
			files = append(files, change(rel, before, after))
		}
	}
	if err := t.commit(ctx, cp, files, upserts, deletes); err != nil {
		return 0, err
	}
	return len(files), nil
}

// watchedChanges is the scan after a call, or at a turn's end, when the
// watcher can name what changed: the stat of every file it names, of
// every baseline entry whose stat was too fresh to trust and, at a turn's
// end, of every file a live process holds for writing, compared with the
// baseline. seen holds each file looked at (true: it is there). ok is
// false when only a full scan can tell (see watchedPaths), or when a file
// looked at has more than one name: a link made during the turn, through
// whose other name the file may have changed unseen.
func (t *Tracker) watchedChanges(kind scanKind) (cands []candidate, seen map[string]bool, ok bool) {
	// What Retire took serves the turn's end; any scan drops it, so a
	// scan between them leaves the end to scan every file.
	w := t.ending
	t.ending = nil
	if w == nil || kind != scanTurnEnd {
		w = t.watchedPaths(kind)
	}
	if !w.ok {
		return nil, nil, false
	}
	paths := w.paths
	for rel, e := range t.base {
		if e.racy || w.held[e.stat.Ino] {
			paths = append(paths, rel)
		}
	}
	seen = make(map[string]bool, len(paths))
	for _, rel := range paths {
		if _, done := seen[rel]; done || t.skips(rel) {
			continue
		}
		st, there, err := tools.StatFile(t.opt.WS, rel)
		if err != nil {
			return nil, nil, false
		}
		seen[rel] = there
		if !there {
			continue
		}
		if st.Links > 1 {
			return nil, nil, false
		}
		if e, inBase := t.base[rel]; inBase && !e.racy && e.stat.SameAs(st) {
			continue
		}
		cands = append(cands, candidate{rel: rel, stat: st})
	}
	return cands, seen, true
}

// watched is what a scan that relies on the change watcher looks at: the
// paths the watcher names and, at a turn's end, the inodes live
// processes hold for writing; ok is false when only a full scan can tell.
type watched struct {
	paths []string
	held  map[uint64]bool
	ok    bool
}

// watchedPaths asks the watcher, and at a turn's end Options.WriteHeld,
// what a scan must look at. Only a full scan can tell when there is no
// watcher or it cannot name every change, when a file has more than one
// name (a write through a name in a directory no watch covers goes
// unreported), and at a turn's end when no WriteHeld or one that cannot
// list the holders, or a command ran that may have made such a name or
// left a writer behind (Tracker.unproven).
func (t *Tracker) watchedPaths(kind scanKind) *watched {
	if t.watch == nil || t.lastTruncated || t.linked > 0 {
		return &watched{}
	}
	w := &watched{}
	if kind == scanTurnEnd {
		if t.opt.WriteHeld == nil || t.unproven {
			return w
		}
		// The holders are listed before the watcher's events are read: a
		// file let go after this look has its close event queued by then.
		inodes, known := t.opt.WriteHeld()
		if !known {
			return w
		}
		w.held = make(map[uint64]bool, len(inodes))
		for _, ino := range inodes {
			w.held[ino] = true
		}
	}
	paths, full := t.watch.Changes()
	w.paths, w.ok = paths, !full
	return w
}

// commit stores what a scan learnt and then moves the in-memory baseline.
func (t *Tracker) commit(ctx context.Context, cp *Checkpoint, files []FileChange, upserts map[string]entry, deletes []string) error {
	c := Commit{Workspace: t.opt.WS.Dir(), Deletes: deletes, Forget: t.purge}
	if len(t.pending) > 0 {
		c.Blobs = t.pending
	}
	for rel, e := range upserts {
		c.Upserts = append(c.Upserts, BaselineEntry{Path: rel, Stat: e.stat, SHA256: e.sha})
	}
	if cp != nil && len(files) > 0 {
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		cp.Files = files
		c.Checkpoint = cp
	}
	if c.Blobs == nil && len(c.Upserts) == 0 && len(c.Deletes) == 0 && len(c.Forget) == 0 && c.Checkpoint == nil {
		return nil
	}
	if err := t.opt.Store.Commit(ctx, c); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	t.pending, t.purge = map[string][]byte{}, nil
	for rel, e := range upserts {
		t.base[rel] = e
	}
	for _, rel := range deletes {
		delete(t.base, rel)
	}
	return nil
}

// before is a file's state before the call: the prediction's, else the
// baseline's, else absent.
func (t *Tracker) before(rel string, pre map[string]state) state {
	if s, ok := pre[rel]; ok {
		return s
	}
	e, ok := t.base[rel]
	if !ok {
		return state{kept: true}
	}
	return state{exists: true, kept: e.sha != "", sha: e.sha, mode: e.stat.Mode, size: e.stat.Size}
}

// changed reports whether a file's content, existence or mode differ; a
// file whose content is not kept on either side counts as changed when
// anything known differs or nothing can be compared.
func changed(a, b state) bool {
	if a.exists != b.exists {
		return true
	}
	if !a.exists {
		return false
	}
	if !a.kept || !b.kept {
		return true
	}
	return a.sha != b.sha || a.mode != b.mode
}

func change(rel string, before, after state) FileChange {
	return FileChange{Path: rel, BeforeExists: before.exists, BeforeSHA256: before.sha, BeforeMode: before.mode,
		AfterExists: after.exists, AfterSHA256: after.sha, AfterSize: after.size, Restorable: before.kept}
}
