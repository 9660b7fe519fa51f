package patch

import (
	"fmt"
	"strings"
	"sync"
)

// IsSearchMarker, isDividerMarker and IsReplaceMarker recognise the
// conflict-style markers of search/replace blocks. Models vary the marker
// length (5 to 9 characters), so any run in that range is accepted. The
// TUI uses the exported two to show such blocks as code.
func IsSearchMarker(l string) bool  { return markerLine(l, '<', "SEARCH") }
func IsReplaceMarker(l string) bool { return markerLine(l, '>', "REPLACE") }
func isDividerMarker(l string) bool {
	t := strings.TrimRight(l, " \t")
	return len(t) >= 5 && len(t) <= 9 && strings.Count(t, "=") == len(t)
}

func markerLine(l string, c byte, word string) bool {
	t := strings.TrimRight(l, " \t")
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 5 || n > 9 {
		return false
	}
	return strings.TrimSpace(t[n:]) == word
}

// ParseSearchReplace reads search/replace blocks:
//
//	path/to/file.go
//	<<<<<<< SEARCH
//	old lines
//	=======
//	new lines
//	>>>>>>> REPLACE
//
// The path is the nearest plausible path line before the block (fence lines
// and blank lines skipped); a block without one reuses the previous path. An
// empty SEARCH creates a file. A block without its REPLACE marker is
// reported as truncated.
func ParseSearchReplace(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	lines := strings.Split(text, "\n")
	p := &Proposal{Format: FormatSearchReplace}
	index := map[string]int{}
	inBlock := make([]bool, len(lines))
	lastPath := ""
	for i := 0; i < len(lines); i++ {
		if !IsSearchMarker(lines[i]) {
			continue
		}
		path := pathBefore(lines, i, inBlock)
		if path == "" {
			path = lastPath
		}
		if path == "" {
			return nil, fmt.Errorf("search/replace block at line %d has no file path before it: %w", i+1, ErrMalformed)
		}
		start := i
		j := i + 1
		for j < len(lines) && !isDividerMarker(lines[j]) {
			if IsSearchMarker(lines[j]) || IsReplaceMarker(lines[j]) {
				return nil, fmt.Errorf("search/replace block at line %d: marker %q before =======: %w", start+1, strings.TrimSpace(lines[j]), ErrMalformed)
			}
			j++
		}
		if j >= len(lines) {
			return nil, fmt.Errorf("search/replace block for %s at line %d has no ======= divider: %w", path, start+1, ErrTruncated)
		}
		search := lines[i+1 : j]
		k := j + 1
		for k < len(lines) && !IsReplaceMarker(lines[k]) {
			if IsSearchMarker(lines[k]) || isDividerMarker(lines[k]) {
				return nil, fmt.Errorf("search/replace block for %s at line %d: marker %q before >>>>>>> REPLACE: %w", path, start+1, strings.TrimSpace(lines[k]), ErrTruncated)
			}
			k++
		}
		if k >= len(lines) {
			return nil, fmt.Errorf("search/replace block for %s at line %d has no >>>>>>> REPLACE marker: %w", path, start+1, ErrTruncated)
		}
		replace := lines[j+1 : k]
		for x := start; x <= k; x++ {
			inBlock[x] = true
		}
		lastPath = path
		if err := addSearchReplace(p, index, path, search, replace); err != nil {
			return nil, fmt.Errorf("search/replace block at line %d: %w", start+1, err)
		}
		i = k
	}
	if len(p.Files) == 0 {
		return nil, ErrNoProposal
	}
	metadata(p, lines, func(i int) bool { return inBlock[i] })
	return p, nil
}

func addSearchReplace(p *Proposal, index map[string]int, path string, search, replace []string) error {
	emptySearch := len(search) == 0 || (len(search) == 1 && strings.TrimSpace(search[0]) == "")
	if emptySearch {
		if _, seen := index[path]; seen {
			return fmt.Errorf("%s: an empty SEARCH creates the file and must be its only block: %w", path, ErrMalformed)
		}
		fc := changeFor(p, index, path, OpAdd)
		c := joinLines(replace)
		fc.Content = &c
		return nil
	}
	fc := changeFor(p, index, path, OpModify)
	if fc.Operation == OpAdd {
		return fmt.Errorf("%s: a new file (empty SEARCH) cannot take further blocks: %w", path, ErrMalformed)
	}
	fc.Edits = append(fc.Edits, Edit{Search: joinLines(search), Replace: joinLines(replace)})
	return nil
}

// pathBefore finds the path line for a block starting at line i.
func pathBefore(lines []string, i int, inBlock []bool) string {
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if inBlock[j] {
			return ""
		}
		t := strings.TrimSpace(lines[j])
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "```") {
			// A fence may carry the path: ```go path/to/file.go
			if f := strings.Fields(strings.TrimPrefix(t, "```")); len(f) == 2 {
				if p := cleanPathLine(f[1]); p != "" {
					return p
				}
			}
			continue
		}
		return cleanPathLine(t)
	}
	return ""
}

// ParseWholeFile reads fenced blocks that carry a path, either in the fence
// info (```go path/to/file.go or ```go:path/to/file.go) or on the line
// before the fence. Blocks without a path are ignored as illustration; an
// unterminated fence is truncated output and refused.
func ParseWholeFile(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	lines := strings.Split(text, "\n")
	p := &Proposal{Format: FormatWholeFile}
	index := map[string]int{}
	inBlock := make([]bool, len(lines))
	for i := 0; i < len(lines); i++ {
		t := strings.TrimRight(lines[i], " \t")
		if !strings.HasPrefix(t, "```") {
			continue
		}
		fence := t[:countPrefix(t, '`')]
		info := strings.TrimSpace(t[len(fence):])
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], " \t") == fence {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("code fence at line %d is never closed: %w", i+1, ErrTruncated)
		}
		path := fencePath(info)
		if path == "" {
			// Prose before a fence is a path only when it looks like a
			// file name: a word such as "code" or "Example" is not one.
			if pb := pathBefore(lines, i, inBlock); plausibleFileName(pb) {
				path = pb
			}
		}
		for x := i; x <= end; x++ {
			inBlock[x] = true
		}
		if path == "" && info == "" && len(p.Files) > 0 {
			// A bare fence after a file's content is what the rest of
			// that file looks like when the file holds its own "```"
			// lines: the file may have been cut at the first of them.
			return nil, fmt.Errorf("a bare %s fence at line %d follows file content, so the file may have ended early at one of its own fences; wrap each file in a longer fence such as %s: %w", fence, i+1, fence+"`", ErrMalformed)
		}
		if path != "" {
			// A fence line with an info string inside the content
			// ("```sh") means the file itself holds fenced blocks written
			// inside a fence of the same length, so which "```" closes
			// the file is a guess: the content may already have ended at
			// one of the file's own fences. Refused, never guessed.
			for j := i + 1; j < end; j++ {
				if strings.HasPrefix(strings.TrimSpace(lines[j]), fence) {
					return nil, fmt.Errorf("the content of %s (line %d) contains a %s fence line, so where it ends is ambiguous; wrap the file in a longer fence such as %s: %w", path, j+1, fence, fence+"`", ErrMalformed)
				}
			}
			if _, dup := index[path]; dup {
				return nil, fmt.Errorf("%s appears twice as a whole file: %w", path, ErrMalformed)
			}
			fc := changeFor(p, index, path, "")
			c := joinLines(lines[i+1 : end])
			fc.Content = &c
		}
		i = end
	}
	if len(p.Files) == 0 {
		return nil, ErrNoProposal
	}
	metadata(p, lines, func(i int) bool { return inBlock[i] })
	return p, nil
}

// extensionless lists file names without a dot or slash that are still
// plainly files. The map is built on first use, so that every kz process
// does not pay for it at start.
var extensionless = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"Makefile": true, "makefile": true, "GNUmakefile": true, "Dockerfile": true,
		"Containerfile": true, "LICENSE": true, "README": true, "Gemfile": true, "Rakefile": true, "Procfile": true,
		"Jenkinsfile": true, "Vagrantfile": true, "CODEOWNERS": true, "Justfile": true, "justfile": true, "BUILD": true, "WORKSPACE": true}
})

// plausibleFileName reports whether a path taken from prose looks like a
// file: it has a directory or an extension, or is a known extensionless
// name.
func plausibleFileName(p string) bool {
	return p != "" && (strings.ContainsAny(p, "./") || extensionless()[p])
}

func countPrefix(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// fencePath reads a path from a fence info string.
func fencePath(info string) string {
	if info == "" {
		return ""
	}
	if lang, rest, ok := strings.Cut(info, ":"); ok && !strings.ContainsAny(lang, " /.") {
		return cleanPathLine(rest)
	}
	f := strings.Fields(info)
	switch {
	case len(f) == 2:
		return cleanPathLine(f[1])
	case len(f) == 1 && strings.ContainsAny(f[0], "/.") && !strings.HasPrefix(f[0], "."):
		return cleanPathLine(f[0])
	}
	return ""
}
