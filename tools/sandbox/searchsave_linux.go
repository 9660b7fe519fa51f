package sandbox

// The search of a writable directory (walk_linux.go) reads every
// directory and lstats every file: 20-30 ms for 10,000 files, paid by the
// first confined command of every kz process, which for kz -p on an
// agent CLI is the CLI's own start, before anything else of the turn can
// happen. Its cache is kept between processes so that a later kz only
// checks what it keeps, one lstat a directory, as a kz that had searched
// the directory itself minutes before would.
//
// A saved directory is trusted exactly as the in-process cache trusts
// one: only while its inode, mtime and ctime are the ones it had when it
// was read, and never when it was read within the racy window of its
// last change. What that cannot see (walk_linux.go's comment: a file
// linked from outside the workspace since) is bounded in time: a saved
// directory read more than maxSavedAge ago is read again, however many
// kz processes carried it forward since.
//
// The file is kz's input for what to protect, so nothing confined may
// write it: Policy.SearchCache must lie below one of Policy.Hidden, the
// directories every command has hidden, or nothing is saved. A file that
// is not a regular file of this user, is writable by others, does not
// parse, names another root or another format, or claims to come from
// the future, is ignored: the search then reads everything, as without a
// saved one.

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// savedFormat names the file's layout; a file of another is ignored.
const savedFormat = 1

// maxSavedAge bounds how old a saved search may be and still be used,
// about the length of one working session.
const maxSavedAge = time.Hour

// maxSavedSize bounds the file read: 64 bytes a directory for maxDirs
// directories, with room for their marks.
const maxSavedSize = 64 << 20

// savedTree is the file of one writable directory's search.
type savedTree struct {
	Format int                 `json:"f"`
	Root   string              `json:"r"`
	Saved  int64               `json:"t"` // Unix nanoseconds
	Dirs   map[string]savedDir `json:"d"`
}

// savedDir is one directory's dirScan; Read is when it was read, by
// whichever kz read it.
type savedDir struct {
	Ino     uint64      `json:"i"`
	Mtime   [2]int64    `json:"m"`
	Ctime   [2]int64    `json:"c"`
	Read    int64       `json:"w"`
	Subdirs []string    `json:"s,omitempty"`
	Marks   []savedMark `json:"k,omitempty"`
}

// savedMark is one mark of a directory.
type savedMark struct {
	Kind markKind `json:"k"`
	Path string   `json:"p"`
	Dir  bool     `json:"d,omitempty"`
}

// newTree returns the search cache of root, filled from its saved search
// when there is a usable one, watching its directories unless the policy
// says not to. A directory read more than maxSavedAge ago, by this kz's
// predecessor or one before it, is left out, and so read again.
func (s *Sandbox) newTree(root string) *tree {
	t := newTreeWatching(root, !s.pol.NoWatch)
	if s.saveDir == "" {
		return t
	}
	st, ok := readSaved(s.savePath(root))
	now := time.Now()
	if !ok || st.Format != savedFormat || st.Root != root || time.Unix(0, st.Saved).After(now.Add(time.Minute)) {
		return t
	}
	for rel, d := range st.Dirs {
		if age := now.Sub(time.Unix(0, d.Read)); age < -time.Minute || age > maxSavedAge {
			continue
		}
		ds := &dirScan{ino: d.Ino, mtime: unix.Timespec{Sec: d.Mtime[0], Nsec: d.Mtime[1]},
			ctime: unix.Timespec{Sec: d.Ctime[0], Nsec: d.Ctime[1]}, read: d.Read, subdirs: d.Subdirs}
		for _, m := range d.Marks {
			ds.marks = append(ds.marks, mark{kind: m.Kind, path: m.Path, dir: m.Dir})
		}
		t.dirs[rel] = ds
	}
	return t
}

// saveTree writes t's cache for the next kz, when its last search read a
// directory (an unchanged tree's file is as good as it was). Directories
// read within the racy window are left out: they are read again anyway.
// It is best effort: a cache that cannot be written is only slower.
func (s *Sandbox) saveTree(t *tree) {
	if s.saveDir == "" || t.reads == 0 {
		return
	}
	st := savedTree{Format: savedFormat, Root: t.root, Saved: time.Now().UnixNano(), Dirs: make(map[string]savedDir, len(t.dirs))}
	for rel, ds := range t.dirs {
		if ds.racy {
			continue
		}
		d := savedDir{Ino: ds.ino, Mtime: [2]int64{ds.mtime.Sec, ds.mtime.Nsec}, Ctime: [2]int64{ds.ctime.Sec, ds.ctime.Nsec},
			Read: ds.read, Subdirs: ds.subdirs}
		for _, m := range ds.marks {
			d.Marks = append(d.Marks, savedMark{Kind: m.kind, Path: m.path, Dir: m.dir})
		}
		st.Dirs[rel] = d
	}
	_ = writeJSONAtomic(s.savePath(t.root), st)
}

// savePath is the file of root's search.
func (s *Sandbox) savePath(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(s.saveDir, "search-"+hex.EncodeToString(sum[:16])+".json")
}

// readSaved reads and decodes a saved search (readOwnedJSON); ok is false
// when there is none or it cannot be trusted to be kz's own.
func readSaved(path string) (savedTree, bool) {
	var st savedTree
	if !readOwnedJSON(path, maxSavedSize, &st) {
		return savedTree{}, false
	}
	return st, true
}
