package tui

import (
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// diffFile is one file of a change as the review shows it: its names,
// operation and stats, and its hunks as internal/diff reads them from the
// change's unified diff. For a patch proposal these are the hunks patch
// wrote the diff from, so the review's hunk numbers are the ones a
// selection (engine.FileSelection.Hunks) names.
type diffFile struct {
	path    string
	oldPath string // set for a rename
	op      string // add, delete, modify, rename (as the engine names it)
	added   int
	removed int
	binary  bool
	hunks   []diff.Hunk
}

// filesFromChanges builds the review's files from a patch proposal.
func filesFromChanges(changes []engine.FileChange) []diffFile {
	out := make([]diffFile, 0, len(changes))
	for _, c := range changes {
		// The hunks are diff.FileHunks of the change's diff, the list a
		// selection's indexes name and patch applies from.
		f := diffFile{path: c.Path, op: c.Operation, hunks: diff.FileHunks(c.Diff)}
		// A FileChange holds one file; its diff may still carry headers
		// (rename, binary) that say more than the operation.
		for _, p := range diff.Parse(c.Diff) {
			df := reviewFile(p)
			f.binary = f.binary || df.binary
			if df.oldPath != "" && df.oldPath != c.Path {
				f.oldPath = df.oldPath
			}
		}
		f.added, f.removed = c.Added, c.Removed
		if f.added == 0 && f.removed == 0 {
			f.added, f.removed = countHunks(f.hunks)
		}
		out = append(out, f)
	}
	return out
}

// filesFromDiff builds the review's files from a permission request: the
// diff of every file concatenated, with paths as a fallback when the diff
// has no headers.
func filesFromDiff(text string, paths []string) []diffFile {
	parsed := diff.Parse(text)
	fs := make([]diffFile, 0, len(parsed))
	for _, p := range parsed {
		fs = append(fs, reviewFile(p))
	}
	if len(fs) == 1 && fs[0].path == "" && len(paths) > 0 {
		fs[0].path = paths[0]
	}
	return fs
}

// reviewFile names a parsed file as the review shows it: by its new path
// (its old one for a deletion), with its operation from the /dev/null
// side, git's headers, or differing paths (a rename).
func reviewFile(p diff.File) diffFile {
	f := diffFile{op: "modify", binary: p.Binary, hunks: p.Hunks}
	f.added, f.removed = p.Stat()
	switch {
	case p.OldPath == diff.DevNull:
		f.op, f.path = "add", p.NewPath
	case p.NewPath == diff.DevNull:
		f.op, f.path = "delete", p.OldPath
	default:
		f.path = p.NewPath
		if p.OldPath != p.NewPath {
			f.oldPath = p.OldPath
		}
	}
	switch {
	case p.NewFileMode != "":
		f.op = "add"
	case p.DeletedFileMode != "":
		f.op = "delete"
	}
	if p.RenameFrom != "" {
		f.oldPath, f.op = p.RenameFrom, "rename"
	}
	if p.RenameTo != "" && p.HeaderLine == 0 {
		f.path = p.RenameTo
	}
	if f.oldPath != "" && f.op == "modify" {
		f.op = "rename"
	}
	return f
}

func countHunks(hs []diff.Hunk) (added, removed int) {
	for _, h := range hs {
		a, r := h.Stat()
		added += a
		removed += r
	}
	return added, removed
}
