// Package memory finds and loads the project memory files a turn runs
// under (AGENTS.md, CLAUDE.md, GEMINI.md and the files they import with
// @path), describes the environment a model works in, and renders both as
// the context block of a system prompt.
//
// Where the files come from, in the order they are given to the model
// (later files refine earlier ones):
//
//  1. the user's kz config directory ($XDG_CONFIG_HOME/kz): rules for
//     every project. kz does not read another agent's home (~/.claude,
//     ~/.codex, ~/.gemini): those belong to that agent and are read by it.
//  2. the repository root (the nearest directory above the working
//     directory that holds .git) and each directory from there down to the
//     working directory; without a repository, the working directory only.
//
// In each directory the names are AGENTS.md, CLAUDE.md, GEMINI.md, then
// .kz/AGENTS.md, .kz/CLAUDE.md, .kz/GEMINI.md. Every read goes through an
// os.Root of the directory the file belongs to (the repository or the
// config directory), so neither a symlink nor an @../ import leaves it.
package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// Names are the memory file names kz looks for, in order.
var Names = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// Limits of what one load reads.
const (
	// MaxFileBytes caps each file; the rest is cut with a note.
	MaxFileBytes = 64 << 10
	// MaxImportDepth bounds chains of @path imports.
	MaxImportDepth = 5
	// MaxFiles bounds the files of one load, imports included.
	MaxFiles = 64
)

// Options say where to look.
type Options struct {
	// Workspace is the working directory (absolute, symlinks resolved).
	Workspace string
	// UserDir is the user's kz config directory; empty means none.
	UserDir string
	// Home expands @~/ imports; empty means they are refused.
	Home string
}

// Result is one load: the files in order and what could not be read.
type Result struct {
	Files    []engine.MemoryFile
	Problems []string
}

// Load finds and reads the memory files. It never fails: a file that
// cannot be read is left out and named in Problems, so a broken import
// costs that import and nothing else.
func Load(ctx context.Context, o Options) Result {
	return load(ctx, o, nil)
}

// load is Load, recording what it looked at in deps when deps is not nil.
func load(ctx context.Context, o Options, deps *[]dep) Result {
	l := &loader{opts: o, seen: map[string]bool{}, deps: deps}
	defer l.close()
	if o.UserDir != "" {
		if deps != nil {
			fi, _ := os.Stat(o.UserDir)
			l.watch(o.UserDir, true, fi)
		}
		if root, err := os.OpenRoot(o.UserDir); err == nil {
			l.user = &base{root: root, dir: resolved(o.UserDir), scope: engine.MemoryUser}
			l.loadDir(ctx, l.user, ".")
		} else if !errors.Is(err, fs.ErrNotExist) {
			l.problem("%s: %v", o.UserDir, err)
		}
	}
	if o.Workspace == "" {
		return l.res
	}
	top := l.repoRoot(o.Workspace)
	root, err := os.OpenRoot(top)
	if err != nil {
		l.problem("%s: %v", top, err)
		return l.res
	}
	l.project = &base{root: root, dir: resolved(top), scope: engine.MemoryProject}
	for _, rel := range dirsDown(top, o.Workspace) {
		l.loadDir(ctx, l.project, rel)
	}
	return l.res
}

// RepoRoot returns the nearest directory at or above dir that holds a
// repository's .git (a directory, or the file of a worktree), or dir
// itself when none does. A .git that holds no HEAD is no repository, as
// git sees it too, and the search goes on above it: an empty /tmp/.git
// (a sandbox's mount point left behind) made every folder below /tmp a
// repository rooted there, its memory files read and its status run.
func RepoRoot(dir string) string {
	top, _ := findRepo(dir)
	return top
}

// findRepo is RepoRoot, and whether a repository was found.
func findRepo(dir string) (string, bool) {
	for d := dir; ; {
		if isRepo(d) {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, false
		}
		d = parent
	}
}

// repoRoot is RepoRoot, recording each .git it looked for.
func (l *loader) repoRoot(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		fi, err := os.Lstat(p)
		l.watch(p, false, fi)
		if err == nil {
			// A directory is watched for what it is, not for its
			// entries: the HEAD that makes it a repository is a
			// dependency of its own.
			if head, hfi := headOf(d); head != "" {
				l.watch(head, true, hfi)
				if hfi != nil && hfi.Mode().IsRegular() {
					return d
				}
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// isRepo reports whether dir holds a repository's .git: one whose git
// directory (the .git directory, or the one a worktree's .git file names)
// has a HEAD file.
func isRepo(dir string) bool {
	_, fi := headOf(dir)
	return fi != nil && fi.Mode().IsRegular()
}

// headOf returns the path of the HEAD of dir's git directory and what is
// there (nil when nothing is), or "" when dir has no git directory.
func headOf(dir string) (string, fs.FileInfo) {
	g := GitDir(dir)
	if g == "" {
		return "", nil
	}
	head := filepath.Join(g, "HEAD")
	fi, err := os.Stat(head)
	if err != nil {
		return head, nil
	}
	return head, fi
}

// dirsDown lists the directories from top down to dir as paths relative
// to top ("." first).
func dirsDown(top, dir string) []string {
	rel, err := filepath.Rel(top, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return []string{"."}
	}
	out := []string{"."}
	if rel == "." {
		return out
	}
	cur := ""
	for part := range strings.SplitSeq(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		out = append(out, cur)
	}
	return out
}

// base is a directory tree memory files may come from.
type base struct {
	root  *os.Root
	dir   string
	scope engine.MemoryScope
}

type loader struct {
	opts          Options
	user, project *base
	seen          map[string]bool
	res           Result
	// deps, when not nil, records every path the load looked at, for
	// Cache to tell whether a later load would read the same.
	deps *[]dep
}

// watch records what the load saw at abs (fi nil: nothing there).
func (l *loader) watch(abs string, follow bool, fi fs.FileInfo) {
	if l.deps != nil {
		*l.deps = append(*l.deps, dep{path: abs, follow: follow, info: fi})
	}
}

func (l *loader) close() {
	for _, b := range []*base{l.user, l.project} {
		if b != nil {
			_ = b.root.Close()
		}
	}
}

func (l *loader) problem(format string, args ...any) {
	l.res.Problems = append(l.res.Problems, fmt.Sprintf(format, args...))
}

// loadDir reads the memory files of one directory of b.
func (l *loader) loadDir(ctx context.Context, b *base, rel string) {
	for _, sub := range []string{"", ".kz"} {
		for _, name := range Names {
			if ctx.Err() != nil {
				return
			}
			p := filepath.Join(rel, sub, name)
			fi, err := b.root.Lstat(p)
			l.watch(filepath.Join(b.dir, p), false, fi)
			if err != nil {
				continue
			}
			l.add(ctx, b, p, name, "", 0)
		}
	}
}

// add reads the file rel of b and, after it, the files it imports.
func (l *loader) add(ctx context.Context, b *base, rel, name, from string, depth int) {
	abs := filepath.Join(b.dir, rel)
	if l.seen[abs] {
		// A file imported twice, or an import cycle: the first reading
		// stands.
		return
	}
	if len(l.res.Files) >= MaxFiles {
		l.problem("%s: not read, more than %d memory files", abs, MaxFiles)
		return
	}
	l.seen[abs] = true
	if l.deps != nil {
		fi, _ := b.root.Stat(rel)
		l.watch(abs, true, fi)
	}
	text, size, err := readCapped(b.root, rel)
	if err != nil {
		l.problem("%s: %v", abs, err)
		return
	}
	f := engine.MemoryFile{Path: abs, Name: name, Scope: b.scope, ImportedFrom: from}
	if size > MaxFileBytes {
		f.Truncated = true
		text += fmt.Sprintf("\n[kz: %s was cut at %d of its %d bytes]\n", abs, MaxFileBytes, size)
	}
	f.Content = text
	f.Tokens = EstimateTokens(text)
	l.res.Files = append(l.res.Files, f)
	for _, imp := range Imports(text) {
		if depth+1 > MaxImportDepth {
			l.problem("%s: import %s not read, imports nest deeper than %d", abs, imp, MaxImportDepth)
			continue
		}
		ib, irel, err := l.resolve(b, filepath.Dir(rel), imp)
		if err != nil {
			l.problem("%s: import %s: %v", abs, imp, err)
			continue
		}
		l.add(ctx, ib, irel, name, abs, depth+1)
	}
}

// resolve finds the base and relative path of an import written in a file
// of b whose directory is dir (relative to b). The import must name a file
// inside the project or the user's config directory.
func (l *loader) resolve(b *base, dir, imp string) (*base, string, error) {
	var abs string
	switch {
	case strings.HasPrefix(imp, "~/"):
		if l.opts.Home == "" {
			return nil, "", errors.New("no home directory")
		}
		abs = filepath.Join(l.opts.Home, imp[2:])
	case filepath.IsAbs(imp):
		abs = filepath.Clean(imp)
	default:
		abs = filepath.Join(b.dir, dir, imp)
	}
	for _, c := range []*base{l.project, l.user} {
		if c == nil {
			continue
		}
		if rel, err := filepath.Rel(c.dir, abs); err == nil && filepath.IsLocal(rel) {
			if why := secretImport(l.opts.Home, c.dir, abs); why != "" {
				return nil, "", errors.New(why + ", which is never read into memory")
			}
			return c, rel, nil
		}
	}
	return nil, "", errors.New("outside the project and the kz config directory")
}

// secretImport says why an import of abs, below the directory dir it is
// read from, names a credential, or "": a file named as one below dir
// (.env, a key, anything in .ssh …) or one of the home's credential
// files, by the path written or the one its links lead to. Memory is read
// with no one asked and the model sees all of it, so what the sandbox
// hides from every command and the gate asks about (a repository's
// CLAUDE.md importing the .env beside it) is never imported.
func secretImport(home, dir, abs string) string {
	type place struct{ home, dir, path string }
	places := []place{{home, dir, abs}}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		// The link's target, against the real directories.
		pl := place{home, dir, real}
		if h, err := filepath.EvalSymlinks(home); err == nil {
			pl.home = h
		}
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			pl.dir = d
		}
		places = append(places, pl)
	}
	for _, pl := range places {
		if rel, err := filepath.Rel(pl.dir, pl.path); err == nil && filepath.IsLocal(rel) && permission.IsCredentialPath(filepath.ToSlash(rel)) {
			return "it is a credential"
		}
		if pl.home != "" && permission.IsHomeCredential(pl.home, pl.path) {
			return "it is one of the home's credential files"
		}
	}
	return ""
}

// readCapped reads at most MaxFileBytes of a regular file through root and
// returns the text and the file's size. Symlinks are followed only inside
// the root; anything but a regular file is refused, so a FIFO cannot hang
// the read.
func readCapped(root *os.Root, rel string) (string, int64, error) {
	fi, err := root.Stat(rel)
	if err != nil {
		return "", 0, cleanErr(err)
	}
	if !fi.Mode().IsRegular() {
		return "", 0, errors.New("not a regular file")
	}
	f, err := root.Open(rel)
	if err != nil {
		return "", 0, cleanErr(err)
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", 0, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes))
	if err != nil {
		return "", 0, fmt.Errorf("read: %w", err)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), fi.Size(), nil
}

// cleanErr keeps the reason of a path error and drops the path, which the
// caller names itself.
func cleanErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// resolved returns dir with its symlinks resolved, or dir when that fails.
func resolved(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// EstimateTokens is a character-based estimate of a text's size in tokens
// (four bytes a token, the rule of thumb for English and code).
func EstimateTokens(s string) int {
	return (len(s) + 3) / 4
}
