// Package checkpoint records what every tool call of any runtime changes
// in the workspace (kz's own tools, a CLI agent's edits, any shell
// command), and composes restores from those records for kz undo and
// /rewind.
//
// The design in one paragraph: before a turn, the Tracker brings a
// baseline of the workspace up to date (every non-ignored regular file:
// its stat, and its content as a blob in the store, deduplicated by
// SHA-256, when it is under the size cap). Before a call that may write,
// it keeps the current content of the paths the call is predicted to
// change, ignored ones included. After the call, a stat-only scan finds
// every file whose size, mtime, ctime, inode or mode differ from the
// baseline (the stat of only the files a change watcher saw touched,
// when it can name them all; of every file otherwise, and always at a
// turn's start; at its end too, unless the watcher can have been told of
// every write, see Options.WriteHeld); those are read and hashed, and
// each one whose content really changed is recorded with its state before
// (the prediction's, else the baseline's) and after. The baseline then
// moves to the new state, in the same transaction. So every non-ignored
// file under the cap that any call changes is restorable, predicted or
// not; an ignored file is restorable only when a prediction named it; a
// file over the cap is recorded as changed but not restorable.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/shell"
	"github.com/kaizen-code/kz/tools/workspace"
)

// Defaults of Options.
const (
	// DefaultMaxFileSize is the largest file whose content is kept.
	DefaultMaxFileSize int64 = 1 << 20
	// DefaultMaxFiles bounds the files a scan looks at.
	DefaultMaxFiles = 100_000
)

// racyWindow is how close to the scan that saw it a file's mtime may be
// and the stat still be trusted. The kernel stamps mtimes from a coarse
// clock (a tick of up to 10 ms), so a file written again within the tick
// after a scan can keep size, mtime and inode (git calls this "racily
// clean"); such files are hashed again at the next scan.
const racyWindow = 50 * time.Millisecond

// Tracker implements engine.Checkpointer for one session in one
// workspace. It is safe for concurrent use; calls are serialised.
type Tracker struct {
	opt Options

	mu     sync.Mutex
	loaded bool
	base   map[string]entry
	// pre holds, per tool call, the state of its predicted paths before
	// it ran.
	pre map[string]map[string]state
	// readOnly marks the calls whose command the shell analysis proves
	// read-only: their end needs no scan (the turn's end scans anyway).
	readOnly map[string]bool
	// pending is content read since the last commit, by SHA-256.
	pending map[string][]byte
	// watch names the files changed since the last scan, so that the scan
	// after a call stats only those (see tools.ChangeWatcher); nil when
	// the system offers no watching, and every scan is a full one.
	watch *tools.ChangeWatcher
	// lastTruncated says the last full scan stopped at MaxFiles: the
	// watcher then does not cover the workspace.
	lastTruncated bool
	// linked counts the files the last full scan found with more than
	// one name: a write through a name in a directory no watch covers (an
	// ignored one, .git) changes the file unreported, so while there is
	// one every scan is a full one.
	linked int
	// unproven says a command that the shell analysis does not prove
	// read-only has run in the session. Such a command runs any program,
	// which may have made a hard link to a workspace file from a
	// directory no watch covers (an ignored one) and written through it,
	// or left a process behind that does so later, and inotify reports
	// neither. From then on every turn's end scans every file.
	unproven bool
	// ending is what Retire took of the watcher for the turn's end.
	ending *watched
	// fullScans counts the scans of the whole workspace (for tests).
	fullScans int
	// own is kz's own paths in the workspace, never checkpointed.
	own Own
	// purge holds the baseline entries an older kz stored of paths it
	// skips (skips): the next commit forgets them (Commit.Forget), as no
	// change of the workspace.
	purge []string
}

// Options configures a Tracker.
type Options struct {
	WS    *workspace.Workspace
	Store Store
	// MaxFileSize is the largest file whose content is kept
	// (DefaultMaxFileSize when 0); MaxFiles bounds a scan (DefaultMaxFiles
	// when 0).
	MaxFileSize int64
	MaxFiles    int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// NoWatch makes every scan a full one (no change watcher).
	NoWatch bool
	// Own holds the absolute paths of kz's own files and directories
	// (store, logs, caches); those inside the workspace are never
	// scanned, watched or checkpointed (see Own).
	Own []string
	// WriteHeld, when set, lists the inodes of the files that a live
	// process able to write for the agent holds so that a write to them
	// may not have been reported to the change watcher yet: mapped shared
	// and writable, or open for writing (proc.WriteHeld of kz's
	// descendants); ok is false when it cannot tell. With it, a turn's
	// end looks only at the files the watcher names, those held files and
	// the racy ones, as the scan after a call does, instead of at every
	// file; without it, or when it cannot tell, the turn's end scans
	// every file, as it does once a command not proven read-only has run
	// in the session (Tracker.unproven). It must cover every process
	// that may have written to the workspace and still lives: a write
	// through a mapping is reported only when the file's last reference
	// closes.
	WriteHeld func() (inodes []uint64, ok bool)
}

// Store is what the tracker keeps in kz's store (internal/app adapts the
// store to it).
type Store interface {
	// Baseline returns the stored baseline of a workspace.
	Baseline(ctx context.Context, workspace string) ([]BaselineEntry, error)
	// Commit stores blobs, baseline changes and a checkpoint in one
	// transaction.
	Commit(ctx context.Context, c Commit) error
}

// BaselineEntry is the last known state of one file.
type BaselineEntry struct {
	Path   string
	Stat   tools.FileStat
	SHA256 string
}

// Commit is what one scan learnt.
type Commit struct {
	Workspace string
	Blobs     map[string][]byte
	Upserts   []BaselineEntry
	Deletes   []string
	// Forget are baseline entries an older kz stored of paths no
	// checkpoint may hold (Tracker.skips): deleted as Deletes are, and
	// the content they name goes from the store when nothing else there
	// names it, so that a credential's secret does not stay in it.
	Forget []string
	// Checkpoint is nil, or holds at least one file.
	Checkpoint *Checkpoint
}

// Checkpoint is the change of one call (or of a turn, ToolCallID "").
type Checkpoint struct {
	SessionID  string
	TurnID     int64
	ToolCallID string
	Tool       string
	Runtime    string
	Files      []FileChange
}

// FileChange is one file of a checkpoint.
type FileChange struct {
	Path         string
	BeforeExists bool
	BeforeSHA256 string
	BeforeMode   fs.FileMode
	AfterExists  bool
	AfterSHA256  string
	AfterSize    int64
	// Restorable is false when the content before is not known (the file
	// was over the size cap).
	Restorable bool
}

// entry is a baseline file; racy marks a stat taken too close to the
// file's mtime to be trusted.
type entry struct {
	stat tools.FileStat
	sha  string
	racy bool
}

// state is a file's state at one moment; sha is "" when it did not exist
// or its content is not kept (kept says which).
type state struct {
	exists bool
	kept   bool
	sha    string
	mode   fs.FileMode
	size   int64
}

var _ engine.Checkpointer = (*Tracker)(nil)

// New returns a tracker; it reads nothing until the first call.
func New(opt Options) *Tracker {
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = DefaultMaxFileSize
	}
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = DefaultMaxFiles
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	t := &Tracker{opt: opt, pre: map[string]map[string]state{}, readOnly: map[string]bool{}, pending: map[string][]byte{},
		own: OwnPaths(opt.WS, opt.Own)}
	if !opt.NoWatch {
		// Without a watcher every scan is a full one: slower, as correct.
		t.watch, _ = tools.NewChangeWatcher(opt.WS)
	}
	return t
}

// Retire says the turn in progress is the session's last (kz -p) and its
// calls are over. What the change watcher saw, and which files live
// processes hold for writing, are taken now, for the turn's end to look at
// (or to say that it must scan every file), and the watcher is let go:
// closeLater is given its Close, to run in the background. Both happen
// before the agent CLI is told to stop. Closing an inotify descriptor
// waits for the kernel to destroy every watch on the machine queued for
// destruction, a CLI's own among them once it exits (and some 15 ms for
// this one's, with a watch on each of 1,000 directories); a CLI stopping
// holds the mappings it is giving back. A write after Retire is no call's
// of the turn: the next kz finds it at its turn's start. Scans after it
// go over every file and watch nothing.
func (t *Tracker) Retire(closeLater func(close func() error)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watch == nil {
		return
	}
	t.ending = t.watchedPaths(scanTurnEnd)
	closeLater(t.watch.Close)
	t.watch = nil
}

// Close releases the tracker's change watcher.
func (t *Tracker) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watch == nil {
		return nil
	}
	err := t.watch.Close()
	t.watch = nil
	return err
}

// Refresh implements engine.Checkpointer.
func (t *Tracker) Refresh(ctx context.Context, _ engine.CheckpointCall) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := t.scan(ctx, nil)
	return err
}

// BeforeCall implements engine.Checkpointer.
func (t *Tracker) BeforeCall(ctx context.Context, c engine.CheckpointCall) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(ctx); err != nil {
		return err
	}
	if _, done := t.pre[c.ToolCallID]; done {
		return nil
	}
	if c.Command != "" {
		if len(c.Paths) == 0 && shell.Analyze(c.Command).ReadOnly() {
			t.readOnly[c.ToolCallID] = true
		} else {
			t.unproven = true
		}
	}
	pre := map[string]state{}
	for _, p := range t.predict(c) {
		st, err := t.read(p)
		if err != nil {
			return err
		}
		pre[p] = st
	}
	t.pre[c.ToolCallID] = pre
	return nil
}

// AfterCall implements engine.Checkpointer.
func (t *Tracker) AfterCall(ctx context.Context, c engine.CheckpointCall) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	pre := t.pre[c.ToolCallID]
	delete(t.pre, c.ToolCallID)
	if t.readOnly[c.ToolCallID] {
		delete(t.readOnly, c.ToolCallID)
		return nil
	}
	cp := &Checkpoint{SessionID: c.SessionID, TurnID: c.TurnID, ToolCallID: c.ToolCallID, Tool: c.Tool, Runtime: c.Runtime}
	if c.ToolCallID == "" {
		// The turn's end also closes the calls whose end never came.
		for id, p := range t.pre {
			for k, v := range p {
				if pre == nil {
					pre = map[string]state{}
				}
				if _, ok := pre[k]; !ok {
					pre[k] = v
				}
			}
			delete(t.pre, id)
		}
		clear(t.readOnly)
	}
	// The scan after one call looks only at what the watcher saw change.
	// So does the turn's end when no process that wrote for the agent
	// can hold a write the watcher has not heard of (Options.WriteHeld);
	// else it scans everything, like the turn's start, which also
	// catches what inotify does not report (a write through a mapping
	// still open).
	kind := scanCall
	if c.ToolCallID == "" {
		kind = scanTurnEnd
	}
	_, err := t.scanInto(ctx, pre, cp, kind)
	return err
}

// predict returns the workspace-relative paths a call is predicted to
// change: the paths it names, and the literal targets a shell command
// writes or deletes. A path that leaves the workspace is no file of it.
func (t *Tracker) predict(c engine.CheckpointCall) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		rel, err := t.opt.WS.Rel(p)
		if err != nil || rel == "." || seen[rel] || t.skips(rel) {
			return
		}
		seen[rel] = true
		out = append(out, rel)
	}
	for _, p := range c.Paths {
		add(p)
	}
	if c.Command != "" {
		for _, tg := range shell.Analyze(c.Command).Targets {
			if tg.Op == shell.OpRead || tg.Dynamic || tg.UnknownCwd || strings.HasPrefix(tg.Path, "~") || shell.IsHarmlessDevice(tg.Path) {
				continue
			}
			add(tg.Path)
		}
	}
	return out
}

// skips reports whether the workspace-relative path rel is never
// checkpointed: one of Options.Own or below one, or a credential by its
// names (permission.IsCredentialPath). A checkpoint keeps the content it
// records in the store, where a secret would be a secret persisted
// unredacted (a project's .env, an SSH key in the home). Nothing kz lets
// an agent do writes one, so no undo needs it: the gate refuses writes to
// credentials and the sandbox hides them from commands. A baseline entry
// an older kz recorded of one is forgotten, content included, at the next
// commit.
func (t *Tracker) skips(rel string) bool {
	return t.own.Covers(rel) || permission.IsCredentialPath(rel)
}

// load reads the stored baseline once.
func (t *Tracker) load(ctx context.Context) error {
	if t.loaded {
		return nil
	}
	rows, err := t.opt.Store.Baseline(ctx, t.opt.WS.Dir())
	if err != nil {
		return fmt.Errorf("load the baseline: %w", err)
	}
	t.base = make(map[string]entry, len(rows))
	for _, r := range rows {
		if t.skips(r.Path) {
			t.purge = append(t.purge, r.Path)
			continue
		}
		t.base[r.Path] = entry{stat: r.Stat, sha: r.SHA256}
	}
	t.loaded = true
	return nil
}

// read returns a file's current state, keeping its content for the next
// commit when it is under the cap.
func (t *Tracker) read(rel string) (state, error) {
	data, info, err := t.opt.WS.ReadFile(rel, t.opt.MaxFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, workspace.ErrNotRegular), errors.Is(err, workspace.ErrChanged):
		// Absent (or below a file: a command's predicted "dir/name"
		// where dir is, or became, a file), a directory, a link: no
		// file content to keep.
		return state{kept: true}, nil
	case errors.Is(err, workspace.ErrTooLarge):
		st, serr := t.opt.WS.Lstat(rel)
		if serr != nil {
			return state{}, fmt.Errorf("checkpoint %s: %w", rel, serr)
		}
		return state{exists: true, mode: st.Mode().Perm(), size: st.Size()}, nil
	case err != nil:
		return state{}, fmt.Errorf("checkpoint %s: %w", rel, err)
	}
	sha := patch.SHA256Hex(data)
	t.pending[sha] = data
	return state{exists: true, kept: true, sha: sha, mode: info.Mode().Perm(), size: int64(len(data))}, nil
}
