package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/themes"
)

// FileLister lists the workspace's files (relative, slash-separated,
// .gitignore applied) for `@` mentions. internal/app can pass one built on the
// tools walker; without it the TUI asks git, and failing that walks the
// directory itself skipping hidden and vendored directories.
type FileLister interface {
	WorkspaceFiles(ctx context.Context) ([]string, error)
}

// mentionLimit caps the files offered to completion.
const mentionLimit = 50000

// filesMsg delivers the workspace's files.
type filesMsg struct {
	files []string
	err   error
}

// mentions is the state of `@` completion.
type mentions struct {
	loading, loaded bool
	files           []string
	lower           []string
	err             string
	memoQ           string
	memo            []string
	cursor          int
}

// mentionQuery is the "@word" being typed at the end of the input, without
// the @, and whether there is one.
func mentionQuery(v string) (string, bool) {
	i := strings.LastIndexAny(v, " \t\n")
	word := v[i+1:]
	if !strings.HasPrefix(word, "@") {
		return "", false
	}
	return word[1:], true
}

// loadFiles starts listing the workspace once.
func (m *Model) loadFiles() tea.Cmd {
	if m.mention.loading || m.mention.loaded || m.ext.workspace == "" {
		return nil
	}
	m.mention.loading = true
	lister, ctx, dir := m.ext.files, m.ctx, m.ext.workspace
	return func() tea.Msg {
		if lister != nil {
			fs, err := lister.WorkspaceFiles(ctx)
			return filesMsg{files: fs, err: err}
		}
		fs, err := listWorkspace(ctx, dir)
		return filesMsg{files: fs, err: err}
	}
}

func (m *Model) onFiles(msg filesMsg) {
	mn := &m.mention
	mn.loading, mn.loaded = false, true
	if msg.err != nil {
		mn.err = msg.err.Error()
		return
	}
	if len(msg.files) > mentionLimit {
		msg.files = msg.files[:mentionLimit]
	}
	mn.files = msg.files
	mn.lower = make([]string, len(msg.files))
	for i, f := range msg.files {
		mn.lower[i] = strings.ToLower(f)
	}
	mn.memoQ, mn.memo = "\x00", nil
}

// matches are the files matching q, best first, at most n.
func (mn *mentions) matches(q string, n int) []string {
	q = strings.ToLower(q)
	if q == mn.memoQ {
		return mn.memo
	}
	type hit struct {
		i, score int
	}
	var hits []hit
	for i, f := range mn.lower {
		if s, ok := fuzzyScore(f, q); ok {
			// Prefer matches in the file name, then shorter paths.
			if strings.Contains(filepath.Base(f), q) {
				s += 500
			}
			hits = append(hits, hit{i, s*100 - min(len(f), 99)})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	out := make([]string, 0, min(len(hits), n))
	for _, h := range hits[:min(len(hits), n)] {
		out = append(out, mn.files[h.i])
	}
	mn.memoQ, mn.memo = q, out
	return out
}

// mentionView lists the file completions above the input.
func (m *Model) mentionView(t *themes.Theme) string {
	q, ok := mentionQuery(m.input.Value())
	if !ok || m.ext.workspace == "" {
		return ""
	}
	mn := &m.mention
	switch {
	case mn.err != "":
		return t.Warn.Render("cannot list files: " + oneLine(mn.err))
	case !mn.loaded:
		return t.Muted.Render("listing files…")
	}
	ms := mn.matches(q, 6)
	if len(ms) == 0 {
		return t.Muted.Render("no file matches @" + oneLine(q))
	}
	mn.cursor = min(mn.cursor, len(ms)-1)
	lines := make([]string, 0, len(ms)+1)
	for i, f := range ms {
		row := ansi.Truncate("@"+oneLine(f), m.width-2, "…")
		if i == mn.cursor {
			lines = append(lines, t.Selected.Render(row))
		} else {
			lines = append(lines, t.Text.Render(row))
		}
	}
	lines = append(lines, t.Muted.Render("tab insert · the model reads mentioned files with its read tool"))
	return strings.Join(lines, "\n")
}

// completeMention replaces the "@word" at the end of the input with the
// selected file. It reports whether there was one to complete.
func (m *Model) completeMention() bool {
	v := m.input.Value()
	q, ok := mentionQuery(v)
	if !ok || !m.mention.loaded {
		return false
	}
	ms := m.mention.matches(q, 6)
	if len(ms) == 0 {
		return false
	}
	f := ms[min(m.mention.cursor, len(ms)-1)]
	if strings.ContainsAny(f, " \t") {
		f = fmt.Sprintf("%q", f)
	}
	m.input.SetValue(v[:len(v)-len(q)-1] + "@" + f + " ")
	m.input.MoveToEnd()
	m.mention.cursor = 0
	return true
}

// listWorkspace lists dir's files with a plain walk that skips hidden and
// vendored directories and honours simple .gitignore patterns (names and
// globs, "/"-anchored and directory-only ones; negations are not
// supported). It does not run git: git in an untrusted repository can be
// made to run commands (core.fsmonitor). internal/app should pass a FileLister
// built on the tools walker, which implements .gitignore fully.
func listWorkspace(ctx context.Context, dir string) ([]string, error) {
	var files []string
	errLimit := errors.New("limit")
	ignores := map[string][]ignorePattern{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory is skipped, not fatal
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			if p != dir && isIgnored(ignores, rel, true) {
				return filepath.SkipDir
			}
			if data, err := os.ReadFile(filepath.Join(p, ".gitignore")); err == nil {
				ignores[rel] = parseIgnore(string(data))
			}
			return nil
		}
		if isIgnored(ignores, rel, false) {
			return nil
		}
		files = append(files, rel)
		if len(files) >= mentionLimit {
			return errLimit
		}
		return nil
	})
	if err != nil && !errors.Is(err, errLimit) {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return files, nil
}

// ignorePattern is one simple .gitignore line.
type ignorePattern struct {
	glob     string
	anchored bool // contains a slash: matched against the path below the .gitignore
	dirOnly  bool
}

func parseIgnore(content string) []ignorePattern {
	var out []ignorePattern
	for _, l := range strings.Split(content, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!") {
			continue
		}
		p := ignorePattern{}
		if strings.HasSuffix(l, "/") {
			p.dirOnly, l = true, strings.TrimSuffix(l, "/")
		}
		if strings.Contains(l, "/") {
			p.anchored, l = true, strings.TrimPrefix(l, "/")
		}
		p.glob = l
		out = append(out, p)
	}
	return out
}

// isIgnored checks rel against the patterns of every directory above it.
func isIgnored(ignores map[string][]ignorePattern, rel string, isDir bool) bool {
	for base, pats := range ignores {
		below := rel
		if base != "." {
			var ok bool
			below, ok = strings.CutPrefix(rel, base+"/")
			if !ok {
				continue
			}
		}
		for _, p := range pats {
			if p.dirOnly && !isDir {
				continue
			}
			target := path.Base(below)
			if p.anchored {
				target = below
			}
			if ok, _ := path.Match(p.glob, target); ok {
				return true
			}
		}
	}
	return false
}

// MentionReader reads a mentioned file for the turn through the same gate
// and tool as read_file, with the decision journaled by the session;
// internal/app implements it. Without one, a mention stays a plain path in
// the prompt.
type MentionReader interface {
	ReadMention(ctx context.Context, path string) (string, error)
}

// mentionedPaths are the distinct "@path" words of a prompt, in order.
func mentionedPaths(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(text) {
		p, ok := strings.CutPrefix(w, "@")
		p = strings.TrimRight(p, ".,;:!?)\"'")
		if !ok || p == "" || seen[p] || strings.Contains(p, "@") {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// expandMentions appends the contents of the files a prompt mentions,
// each read through r (the read_file gate). A file the gate refuses or
// that cannot be read is named with the reason instead, so the model and
// the person both see what was not attached. It runs in a Cmd: reads
// block.
func expandMentions(ctx context.Context, r MentionReader, text string) string {
	return expandPaths(ctx, r, text, mentionedPaths(text))
}

// expandPaths is expandMentions for the given mentioned paths.
func expandPaths(ctx context.Context, r MentionReader, text string, paths []string) string {
	if r == nil || len(paths) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	b.WriteString("\n\nFiles mentioned with @ (read through kz's read_file permission gate):")
	for _, p := range paths {
		out, err := r.ReadMention(ctx, p)
		if err != nil {
			fmt.Fprintf(&b, "\n\n(@%s not attached: %s)", p, oneLine(err.Error()))
			continue
		}
		fmt.Fprintf(&b, "\n\n<file path=%q>\n%s\n</file>", p, strings.TrimRight(out, "\n"))
	}
	return b.String()
}
