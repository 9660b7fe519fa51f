package patch

import (
	"errors"
	"fmt"
	"strings"
)

// Parsing limits. Inputs beyond them are refused before any work, so a
// hostile or runaway model output cannot exhaust memory or time.
const (
	MaxInputBytes = 8 << 20
	MaxInputLines = 200_000
)

// Parse errors callers may test with errors.Is.
var (
	ErrTooLarge   = errors.New("proposal exceeds the size limits")
	ErrTruncated  = errors.New("proposal is truncated")
	ErrNoProposal = errors.New("no proposal found in the text")
	ErrMalformed  = errors.New("malformed proposal")
)

// Parse reads a proposal in any supported format, detected from its
// markers: JSON, the "*** Begin Patch" envelope, search/replace blocks,
// unified diffs, and fenced whole-file content with a path. SUMMARY:,
// VERIFY: and RISK: lines outside the edit blocks fill in the metadata.
func Parse(text string) (*Proposal, error) {
	if err := checkLimits(text); err != nil {
		return nil, err
	}
	text = normalizeNewlines(text)
	var (
		p   *Proposal
		err error
	)
	switch detectFormat(text) {
	case FormatJSON:
		body := strings.TrimSpace(text)
		if !strings.HasPrefix(body, "{") {
			body = fencedJSON(text)
		}
		return ParseJSON([]byte(body))
	case FormatEnvelope:
		p, err = ParseEnvelope(text)
	case FormatSearchReplace:
		p, err = ParseSearchReplace(text)
	case FormatUnified:
		p, err = ParseUnified(text)
	case FormatWholeFile:
		p, err = ParseWholeFile(text)
	default:
		return nil, ErrNoProposal
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// detectFormat picks the parser from unambiguous markers, most specific
// first.
func detectFormat(text string) Format {
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "{") && strings.Contains(trimmed, `"files"`) {
		return FormatJSON
	}
	if fencedJSON(text) != "" {
		return FormatJSON
	}
	lines := strings.Split(text, "\n")
	hasUnifiedHunk, hasHeaders := false, false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "*** Begin Patch":
			return FormatEnvelope
		case IsSearchMarker(l):
			return FormatSearchReplace
		case strings.HasPrefix(l, "@@ -"):
			hasUnifiedHunk = true
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			hasHeaders = true
		}
	}
	if hasUnifiedHunk || hasHeaders {
		return FormatUnified
	}
	if strings.Contains(text, "```") {
		return FormatWholeFile
	}
	return ""
}

// fencedJSON returns the body of a ```json fence holding a proposal object.
func fencedJSON(text string) string {
	for _, start := range []string{"```json\n", "```JSON\n"} {
		i := strings.Index(text, start)
		if i < 0 {
			continue
		}
		rest := text[i+len(start):]
		j := strings.Index(rest, "\n```")
		if j < 0 {
			continue
		}
		body := strings.TrimSpace(rest[:j])
		if strings.HasPrefix(body, "{") && strings.Contains(body, `"files"`) {
			return body
		}
	}
	return ""
}

func checkLimits(text string) error {
	if len(text) > MaxInputBytes {
		return fmt.Errorf("%d bytes (limit %d): %w", len(text), MaxInputBytes, ErrTooLarge)
	}
	if n := strings.Count(text, "\n"); n > MaxInputLines {
		return fmt.Errorf("%d lines (limit %d): %w", n, MaxInputLines, ErrTooLarge)
	}
	return nil
}

// normalizeNewlines turns CRLF (and a lone trailing CR) into LF. Models mix
// line endings freely; files keep their own endings at apply time.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return s
}

// metadata collects SUMMARY:, VERIFY: and RISK: lines from text outside
// edit blocks. inBlock reports whether line i belongs to an edit block.
func metadata(p *Proposal, lines []string, inBlock func(i int) bool) {
	for i, l := range lines {
		if inBlock != nil && inBlock(i) {
			continue
		}
		key, val, ok := MetadataKey(l)
		if !ok {
			continue
		}
		switch key {
		case "SUMMARY":
			if p.Summary == "" {
				p.Summary = val
			}
		case "VERIFY", "VERIFICATION":
			if v := strings.Trim(val, "`"); v != "" {
				p.Verification = append(p.Verification, v)
			}
		case "RISK", "RISKS":
			if val != "" {
				p.Risks = append(p.Risks, val)
			}
		}
	}
}

// cleanPathLine extracts a path from a line a model wrote before a block:
// "path/to/file.go", "**path/to/file.go**", "`a.go`", "File: a.go", "# a.go:".
// It returns "" when the line does not look like a single path.
func cleanPathLine(line string) string {
	s := strings.TrimSpace(line)
	for _, pre := range []string{"#", "File:", "file:", "Path:", "path:", "Filename:", "filename:"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, pre))
	}
	s = strings.Trim(s, "*`'\"")
	s = strings.TrimSuffix(s, ":")
	s = strings.Trim(s, "*`'\"")
	s = strings.TrimPrefix(s, "./")
	if s == "" || strings.ContainsAny(s, " \t") || strings.HasPrefix(s, "```") {
		return ""
	}
	if IsSearchMarker(s) || isDividerMarker(s) || IsReplaceMarker(s) {
		return ""
	}
	return s
}

// splitText splits block text into lines, dropping one final newline.
func splitText(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// joinLines is the inverse of splitText for non-empty blocks.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// changeFor returns the FileChange for path in p, creating it in order of
// first appearance.
func changeFor(p *Proposal, index map[string]int, path string, op Operation) *FileChange {
	if i, ok := index[path]; ok {
		return &p.Files[i]
	}
	index[path] = len(p.Files)
	p.Files = append(p.Files, FileChange{Path: path, Operation: op})
	return &p.Files[len(p.Files)-1]
}

// MetadataKey reads a proposal's metadata line ("VERIFY: go test ./...",
// "**Risk:** none"): its key, upper-cased and without markdown emphasis,
// and its value. ok is false for any other line.
func MetadataKey(line string) (key, val string, ok bool) {
	key, val, found := strings.Cut(strings.TrimSpace(line), ":")
	if !found {
		return "", "", false
	}
	key = strings.ToUpper(strings.Trim(strings.TrimSpace(key), "*#- "))
	switch key {
	case "SUMMARY", "VERIFY", "VERIFICATION", "RISK", "RISKS":
		return key, strings.TrimSpace(strings.TrimLeft(val, "*")), true
	}
	return "", "", false
}
