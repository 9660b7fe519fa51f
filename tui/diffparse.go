package tui

import (
	"strconv"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// diffFile is one file of a change, parsed from its unified diff for the
// review view.
type diffFile struct {
	path    string
	oldPath string // set for a rename
	op      string // add, delete, modify, rename (as the engine names it)
	added   int
	removed int
	binary  bool
	hunks   []diffHunk
}

// diffHunk is one @@ section. Lines keep their marker in kind.
type diffHunk struct {
	header             string // the @@ line, "" for a headerless diff
	oldStart, newStart int
	lines              []diffLine
}

// lineKind says what a diff line does.
type lineKind byte

const (
	lineContext lineKind = ' '
	lineAdded   lineKind = '+'
	lineRemoved lineKind = '-'
)

// diffLine is one line of a hunk without its marker. crlf records a "\r"
// cut from the end, so the view can show that the line ends in CRLF
// instead of printing a carriage return.
type diffLine struct {
	kind   lineKind
	text   string
	crlf   bool
	noEOL  bool // followed by "\ No newline at end of file"
	oldNum int  // 0 when the line is not on that side
	newNum int
}

// filesFromChanges builds the review's files from a patch proposal.
func filesFromChanges(changes []engine.FileChange) []diffFile {
	out := make([]diffFile, 0, len(changes))
	for _, c := range changes {
		fs := parseUnified(c.Diff)
		f := diffFile{path: c.Path, op: c.Operation}
		// A FileChange holds one file; its diff may still carry headers
		// (rename, binary) that say more than the operation.
		for _, p := range fs {
			f.hunks = append(f.hunks, p.hunks...)
			f.binary = f.binary || p.binary
			if p.oldPath != "" && p.oldPath != c.Path {
				f.oldPath = p.oldPath
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
func filesFromDiff(diff string, paths []string) []diffFile {
	fs := parseUnified(diff)
	if len(fs) == 1 && fs[0].path == "" && len(paths) > 0 {
		fs[0].path = paths[0]
	}
	for i := range fs {
		fs[i].added, fs[i].removed = countHunks(fs[i].hunks)
	}
	return fs
}

func countHunks(hs []diffHunk) (added, removed int) {
	for _, h := range hs {
		for _, l := range h.lines {
			switch l.kind {
			case lineAdded:
				added++
			case lineRemoved:
				removed++
			}
		}
	}
	return added, removed
}

// parseUnified reads a unified diff of one or more files. It is lenient:
// a diff without headers is one file, lines before any @@ form a
// headerless hunk, and unknown lines are skipped; a review must show
// whatever a runtime sends rather than fail.
func parseUnified(diff string) []diffFile {
	var files []diffFile
	var cur *diffFile
	var hunk *diffHunk
	oldN, newN := 1, 1
	newFile := func() {
		files = append(files, diffFile{op: "modify"})
		cur, hunk = &files[len(files)-1], nil
	}
	lines := strings.Split(diff, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if len(l) > 0 && l[0] != '+' && l[0] != '-' && l[0] != ' ' {
			// A header of a CRLF file may end in CR too.
			l = strings.TrimSuffix(l, "\r")
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			newFile()
			if a, b, ok := strings.Cut(strings.TrimPrefix(l, "diff --git "), " b/"); ok {
				cur.path = b
				if a = strings.TrimPrefix(a, "a/"); a != b {
					cur.oldPath = a
				}
			}
			continue
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if cur == nil || len(cur.hunks) > 0 || cur.binary {
				newFile()
			}
			oldP, newP := headerPath(l[4:]), headerPath(lines[i+1][4:])
			switch {
			case oldP == "/dev/null":
				cur.op, cur.path = "add", newP
			case newP == "/dev/null":
				cur.op, cur.path = "delete", oldP
			default:
				cur.path = newP
				if oldP != newP {
					cur.oldPath = oldP
				}
			}
			i++
			continue
		case cur != nil && hunk == nil && strings.HasPrefix(l, "rename from "):
			cur.oldPath, cur.op = strings.TrimPrefix(l, "rename from "), "rename"
			continue
		case cur != nil && hunk == nil && strings.HasPrefix(l, "rename to "):
			cur.path = strings.TrimPrefix(l, "rename to ")
			continue
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			if cur == nil {
				newFile()
			}
			cur.binary = true
			continue
		case cur != nil && hunk == nil && (strings.HasPrefix(l, "new file mode") || strings.HasPrefix(l, "deleted file mode") ||
			strings.HasPrefix(l, "index ") || strings.HasPrefix(l, "similarity index") || strings.HasPrefix(l, "old mode") || strings.HasPrefix(l, "new mode")):
			switch {
			case strings.HasPrefix(l, "new file mode"):
				cur.op = "add"
			case strings.HasPrefix(l, "deleted file mode"):
				cur.op = "delete"
			}
			continue
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				newFile()
			}
			l = strings.TrimSuffix(l, "\r")
			o, n := parseHunkHeader(l)
			cur.hunks = append(cur.hunks, diffHunk{header: l, oldStart: o, newStart: n})
			hunk = &cur.hunks[len(cur.hunks)-1]
			oldN, newN = max(o, 1), max(n, 1)
			if o == 0 {
				oldN = 0
			}
			continue
		case strings.HasPrefix(l, `\ `):
			if hunk != nil && len(hunk.lines) > 0 {
				hunk.lines[len(hunk.lines)-1].noEOL = true
			}
			continue
		}
		if l == "" || (l[0] != '+' && l[0] != '-' && l[0] != ' ') {
			if l == "" && hunk != nil {
				// Some tools drop the space of an empty context line.
				l = " "
			} else {
				continue
			}
		}
		if cur == nil {
			newFile()
		}
		if hunk == nil {
			cur.hunks = append(cur.hunks, diffHunk{oldStart: 1, newStart: 1})
			hunk = &cur.hunks[len(cur.hunks)-1]
			oldN, newN = 1, 1
		}
		dl := diffLine{kind: lineKind(l[0]), text: l[1:]}
		if strings.HasSuffix(dl.text, "\r") {
			dl.text, dl.crlf = dl.text[:len(dl.text)-1], true
		}
		switch dl.kind {
		case lineAdded:
			dl.newNum = newN
			newN++
		case lineRemoved:
			dl.oldNum = oldN
			oldN++
		default:
			dl.oldNum, dl.newNum = oldN, newN
			oldN++
			newN++
		}
		hunk.lines = append(hunk.lines, dl)
	}
	for i := range files {
		if files[i].oldPath != "" && files[i].op == "modify" {
			files[i].op = "rename"
		}
	}
	return files
}

// headerPath takes the path out of a ---/+++ line: the a/ or b/ prefix and
// a tab-separated timestamp go.
func headerPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return s
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// parseHunkHeader reads the start lines of "@@ -o,n +o,n @@". Bad numbers
// give 1: the view is still useful, only its line numbers are off.
func parseHunkHeader(h string) (oldStart, newStart int) {
	oldStart, newStart = 1, 1
	for _, f := range strings.Fields(h) {
		if len(f) < 2 || (f[0] != '-' && f[0] != '+') {
			continue
		}
		num, _, _ := strings.Cut(f[1:], ",")
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		if f[0] == '-' {
			oldStart = n
		} else {
			newStart = n
		}
	}
	return oldStart, newStart
}
