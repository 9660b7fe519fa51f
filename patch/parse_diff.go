package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseEnvelope reads the apply_patch envelope:
//
//	*** Begin Patch
//	*** Add File: path      (+ lines)
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path   (optional, right after Update)
//	@@ optional anchor line
//	 context / -removed / +added
//	*** End of File         (optional: the hunk ends at the end of the file)
//	*** End Patch
//
// A missing "*** End Patch" means the output was cut off and is refused.
func ParseEnvelope(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	lines := strings.Split(text, "\n")
	begin := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			begin = i
			break
		}
	}
	if begin < 0 {
		return nil, ErrNoProposal
	}
	p := &Proposal{Format: FormatEnvelope}
	index := map[string]int{}
	end := -1
	var cur *FileChange
	var h hunkBuilder
	var flushErr error
	flush := func() {
		if cur != nil && h.started() {
			if e, ok := h.edit(); ok {
				cur.Edits = append(cur.Edits, e)
			} else if flushErr == nil {
				flushErr = fmt.Errorf("a hunk of %s changes nothing: %w", cur.Path, ErrMalformed)
			}
		}
		h = hunkBuilder{}
	}
	for i := begin + 1; i < len(lines) && end < 0; i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		header := func(prefix string) (string, bool) {
			if !strings.HasPrefix(t, prefix) {
				return "", false
			}
			return strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(t, prefix)), "./"), true
		}
		if path, ok := header("*** Add File:"); ok {
			flush()
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("envelope line %d: %s appears twice: %w", i+1, path, ErrMalformed)
			}
			cur = changeFor(p, index, path, OpAdd)
			var body []string
			for i+1 < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "*** ") {
				i++
				body = append(body, strings.TrimPrefix(lines[i], "+"))
			}
			c := joinLines(trimTrailingEmpty(body))
			cur.Content = &c
			cur = nil
			continue
		}
		if path, ok := header("*** Delete File:"); ok {
			flush()
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("envelope line %d: %s appears twice: %w", i+1, path, ErrMalformed)
			}
			changeFor(p, index, path, OpDelete)
			cur = nil
			continue
		}
		if path, ok := header("*** Update File:"); ok {
			flush()
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("envelope line %d: %s appears twice: %w", i+1, path, ErrMalformed)
			}
			cur = changeFor(p, index, path, OpModify)
			continue
		}
		if path, ok := header("*** Move to:"); ok {
			if cur == nil || len(cur.Edits) > 0 || h.started() {
				return nil, fmt.Errorf("envelope line %d: *** Move to: must follow *** Update File: %w", i+1, ErrMalformed)
			}
			cur.Operation, cur.NewPath = OpRename, path
			continue
		}
		switch {
		case t == "*** End Patch":
			flush()
			end = i
			continue
		case t == "*** End of File":
			h.atEOF = true
			flush()
			continue
		case strings.HasPrefix(t, "***"):
			return nil, fmt.Errorf("envelope line %d: unknown header %q: %w", i+1, t, ErrMalformed)
		}
		if cur == nil {
			if t == "" {
				continue
			}
			return nil, fmt.Errorf("envelope line %d: hunk line outside an Update File section: %w", i+1, ErrMalformed)
		}
		if strings.HasPrefix(l, "@@") {
			flush()
			h.anchor = strings.TrimSpace(strings.TrimPrefix(l, "@@"))
			continue
		}
		if err := h.add(l); err != nil {
			return nil, fmt.Errorf("envelope line %d: %w", i+1, err)
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("no *** End Patch line: %w", ErrTruncated)
	}
	if flushErr != nil {
		return nil, flushErr
	}
	if len(p.Files) == 0 {
		return nil, ErrNoProposal
	}
	metadata(p, lines, func(i int) bool { return i >= begin && i <= end })
	return p, nil
}

// hunkBuilder accumulates " ", "-" and "+" lines into one Edit.
type hunkBuilder struct {
	search, replace []string
	changed         bool
	anchor          string
	hint            int
	atEOF           bool
	n               int
}

func (h *hunkBuilder) started() bool { return h.n > 0 }

func (h *hunkBuilder) add(l string) error {
	h.n++
	switch {
	case l == "":
		// Models drop the leading space of blank context lines.
		h.search = append(h.search, "")
		h.replace = append(h.replace, "")
	case l[0] == ' ':
		h.search = append(h.search, l[1:])
		h.replace = append(h.replace, l[1:])
	case l[0] == '-':
		h.search = append(h.search, l[1:])
		h.changed = true
	case l[0] == '+':
		h.replace = append(h.replace, l[1:])
		h.changed = true
	case l[0] == '\\':
		// "\ No newline at end of file": the file keeps its own state.
	default:
		return fmt.Errorf("hunk line %q does not start with ' ', '-' or '+': %w", truncate(l, 60), ErrMalformed)
	}
	return nil
}

// edit returns the hunk as an Edit; a hunk without changes is dropped.
func (h *hunkBuilder) edit() (Edit, bool) {
	if !h.changed {
		return Edit{}, false
	}
	return Edit{Search: joinLines(h.search), Replace: joinLines(h.replace), Anchor: h.anchor, LineHint: h.hint, AtEOF: h.atEOF}, true
}

func trimTrailingEmpty(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ParseUnified reads unified diffs (git or plain). Hunk line numbers are
// kept only as hints; hunk counts are used to detect a diff cut off at the
// end of the text. Git extended headers give file modes, new/deleted files
// and renames.
func ParseUnified(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	// The final newline ends the last line; it does not start an empty
	// line (which a hunk would read as blank context).
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	p := &Proposal{Format: FormatUnified}
	index := map[string]int{}
	inBlock := make([]bool, len(lines))
	var cur *FileChange
	var git struct {
		newMode, deletedMode, mode, renameFrom, renameTo string
	}
	resetGit := func() { git.newMode, git.deletedMode, git.mode, git.renameFrom, git.renameTo = "", "", "", "", "" }
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inBlock[i] = true
			resetGit()
			cur = nil
			continue
		case strings.HasPrefix(l, "new file mode "):
			git.newMode = strings.TrimSpace(strings.TrimPrefix(l, "new file mode "))
		case strings.HasPrefix(l, "deleted file mode "):
			git.deletedMode = strings.TrimSpace(strings.TrimPrefix(l, "deleted file mode "))
		case strings.HasPrefix(l, "new mode "):
			git.mode = strings.TrimSpace(strings.TrimPrefix(l, "new mode "))
		case strings.HasPrefix(l, "rename from "):
			git.renameFrom = strings.TrimSpace(strings.TrimPrefix(l, "rename from "))
		case strings.HasPrefix(l, "rename to "):
			git.renameTo = strings.TrimSpace(strings.TrimPrefix(l, "rename to "))
			// A pure rename has no ---/+++ lines.
			if git.renameFrom != "" {
				cur = changeFor(p, index, git.renameFrom, OpRename)
				cur.NewPath = git.renameTo
			}
		case strings.HasPrefix(l, "old mode "), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
		case strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch"):
			return nil, fmt.Errorf("line %d: binary diffs are not supported: %w", i+1, ErrMalformed)
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			oldPath, newPath := diffPath(l[4:]), diffPath(lines[i+1][4:])
			oldPath, newPath = stripGitPrefixes(oldPath, newPath)
			inBlock[i], inBlock[i+1] = true, true
			i++
			var err error
			cur, err = unifiedFile(p, index, oldPath, newPath, git.newMode, git.deletedMode, git.mode)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i, err)
			}
			continue
		case strings.HasPrefix(l, "@@ -"):
			if cur == nil {
				return nil, fmt.Errorf("line %d: hunk without a ---/+++ file header: %w", i+1, ErrMalformed)
			}
			next, err := readUnifiedHunk(lines, i, cur)
			if err != nil {
				return nil, err
			}
			for x := i; x < next; x++ {
				inBlock[x] = true
			}
			i = next - 1
			continue
		default:
			continue
		}
		inBlock[i] = true
		if cur != nil && git.mode != "" && cur.Mode == "" {
			cur.Mode = git.mode
		}
	}
	if len(p.Files) == 0 {
		return nil, ErrNoProposal
	}
	for i := range p.Files {
		f := &p.Files[i]
		if f.Operation == OpAdd && f.Content == nil {
			empty := ""
			f.Content = &empty
		}
	}
	metadata(p, lines, func(i int) bool { return inBlock[i] })
	return p, nil
}

func unifiedFile(p *Proposal, index map[string]int, oldPath, newPath, newMode, deletedMode, mode string) (*FileChange, error) {
	switch {
	case oldPath == "/dev/null" && newPath == "/dev/null":
		return nil, fmt.Errorf("both sides are /dev/null: %w", ErrMalformed)
	case oldPath == "/dev/null":
		if _, dup := index[newPath]; dup {
			return nil, fmt.Errorf("%s appears twice: %w", newPath, ErrMalformed)
		}
		fc := changeFor(p, index, newPath, OpAdd)
		fc.Mode = firstNonEmpty(newMode, mode)
		return fc, nil
	case newPath == "/dev/null":
		if _, dup := index[oldPath]; dup {
			return nil, fmt.Errorf("%s appears twice: %w", oldPath, ErrMalformed)
		}
		fc := changeFor(p, index, oldPath, OpDelete)
		_ = deletedMode
		return fc, nil
	}
	if i, ok := index[oldPath]; ok && p.Files[i].Operation == OpRename && p.Files[i].NewPath == newPath {
		return &p.Files[i], nil
	}
	if _, dup := index[oldPath]; dup {
		return nil, fmt.Errorf("%s appears twice: %w", oldPath, ErrMalformed)
	}
	op := OpModify
	if oldPath != newPath {
		op = OpRename
	}
	fc := changeFor(p, index, oldPath, op)
	if op == OpRename {
		fc.NewPath = newPath
	}
	fc.Mode = mode
	return fc, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// diffPath takes the path from a ---/+++ line, dropping a tab-separated
// timestamp and surrounding quotes.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		s = u
	}
	return s
}

// stripGitPrefixes removes git's a/ and b/ prefixes when the pair uses them.
func stripGitPrefixes(oldPath, newPath string) (string, string) {
	oa, nb := strings.HasPrefix(oldPath, "a/"), strings.HasPrefix(newPath, "b/")
	switch {
	case oa && nb:
		return oldPath[2:], newPath[2:]
	case oldPath == "/dev/null" && nb:
		return oldPath, newPath[2:]
	case newPath == "/dev/null" && oa:
		return oldPath[2:], newPath
	}
	return strings.TrimPrefix(oldPath, "./"), strings.TrimPrefix(newPath, "./")
}

// readUnifiedHunk reads the hunk whose header is at lines[i] into cur and
// returns the index of the first line after it.
func readUnifiedHunk(lines []string, i int, cur *FileChange) (int, error) {
	oldStart, oldCount, newCount, ok := parseHunkHeader(lines[i])
	if !ok {
		return 0, fmt.Errorf("line %d: bad hunk header %q: %w", i+1, truncate(lines[i], 60), ErrMalformed)
	}
	h := hunkBuilder{hint: oldStart}
	seenOld, seenNew := 0, 0
	j := i + 1
	for ; j < len(lines); j++ {
		l := lines[j]
		if strings.HasPrefix(l, "@@ ") || strings.HasPrefix(l, "diff --git ") {
			break
		}
		if strings.HasPrefix(l, "--- ") && j+1 < len(lines) && strings.HasPrefix(lines[j+1], "+++ ") && seenOld >= oldCount && seenNew >= newCount {
			break
		}
		if l != "" && !strings.ContainsRune(" -+\\", rune(l[0])) {
			break
		}
		if err := h.add(l); err != nil {
			return 0, fmt.Errorf("line %d: %w", j+1, err)
		}
		switch {
		case l == "" || l[0] == ' ':
			seenOld++
			seenNew++
		case l[0] == '-':
			seenOld++
		case l[0] == '+':
			seenNew++
		}
	}
	// Trailing empty lines are separators more often than blank context.
	for len(h.search) > 0 && j > i+1 && lines[j-1] == "" && h.search[len(h.search)-1] == "" && len(h.replace) > 0 && h.replace[len(h.replace)-1] == "" {
		if seenOld <= oldCount && seenNew <= newCount {
			break
		}
		h.search, h.replace = h.search[:len(h.search)-1], h.replace[:len(h.replace)-1]
		seenOld--
		seenNew--
		j--
	}
	if j >= len(lines) && (seenOld < oldCount || seenNew < newCount) {
		return 0, fmt.Errorf("hunk at line %d for %s ends early (%d of %d old lines, %d of %d new lines): %w", i+1, cur.Path, seenOld, oldCount, seenNew, newCount, ErrTruncated)
	}
	if cur.Operation == OpAdd {
		if len(h.search) > 0 {
			return 0, fmt.Errorf("hunk at line %d: a new file cannot have context or removed lines: %w", i+1, ErrMalformed)
		}
		c := ""
		if cur.Content != nil {
			c = *cur.Content
		}
		c += joinLines(h.replace)
		cur.Content = &c
		return j, nil
	}
	if cur.Operation == OpDelete {
		return j, nil
	}
	e, ok := h.edit()
	if !ok {
		return 0, fmt.Errorf("hunk at line %d for %s changes nothing (cut off?): %w", i+1, cur.Path, ErrMalformed)
	}
	cur.Edits = append(cur.Edits, e)
	return j, nil
}

// parseHunkHeader reads "@@ -a,b +c,d @@ ...". Counts default to 1.
func parseHunkHeader(l string) (oldStart, oldCount, newCount int, ok bool) {
	rest := strings.TrimPrefix(l, "@@ -")
	end := strings.Index(rest, " @@")
	if end < 0 {
		return 0, 0, 0, false
	}
	fields := strings.Fields(rest[:end])
	if len(fields) != 2 || !strings.HasPrefix(fields[1], "+") {
		return 0, 0, 0, false
	}
	num := func(s string) (int, int, bool) {
		a, b, has := strings.Cut(s, ",")
		x, err := strconv.Atoi(a)
		if err != nil || x < 0 || x > MaxInputLines*10 {
			return 0, 0, false
		}
		y := 1
		if has {
			if y, err = strconv.Atoi(b); err != nil || y < 0 || y > MaxInputLines {
				return 0, 0, false
			}
		}
		return x, y, true
	}
	os, oc, ok1 := num(fields[0])
	_, nc, ok2 := num(fields[1][1:])
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	return os, oc, nc, true
}
