package patch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FS is the path-level view of the workspace the applier judges paths
// with, relative to the workspace root: Resolve follows symlinks and fails
// for anything outside the root, Lstat describes a name. The applier never
// reads or writes by path: it acts through directory handles reached
// without following links (DirFS, which the FS provides itself or through
// a Root() *os.Root, as *workspace.Workspace in tools/workspace does), so
// what it writes is exactly what was judged.
type FS interface {
	Lstat(rel string) (fs.FileInfo, error)
	Resolve(rel string) (string, error)
	Rel(p string) (string, error)
}

// PathGuard is the permission gate's protected-path check (writes to .git,
// agent and kz config, credentials, …). A non-nil error refuses the path.
type PathGuard interface {
	CheckWrite(ctx context.Context, rel string) error
}

// RefusalKind classifies a validation problem.
type RefusalKind string

// The kinds of refusal.
const (
	RefusedPath        RefusalKind = "bad_path"
	RefusedProtected   RefusalKind = "protected_path"
	RefusedConflict    RefusalKind = "conflicting_paths"
	RefusedMode        RefusalKind = "unsupported_mode"
	RefusedStale       RefusalKind = "stale"
	RefusedMissing     RefusalKind = "missing_file"
	RefusedExists      RefusalKind = "file_exists"
	RefusedNotRegular  RefusalKind = "not_regular_file"
	RefusedNoMatch     RefusalKind = "no_match"
	RefusedAmbiguous   RefusalKind = "ambiguous_match"
	RefusedPlaceholder RefusalKind = "placeholder"
	RefusedTooLarge    RefusalKind = "too_large"
	RefusedEmpty       RefusalKind = "empty_change"
	// RefusedChanged means a path changed after it was judged: a symbolic
	// link or another directory now stands where a plain directory or
	// file was. Nothing was written.
	RefusedChanged RefusalKind = "path_changed"
)

// Sentinels for errors.Is on a *ValidationError.
var (
	ErrRefused  = errors.New("proposal refused")
	ErrStale    = errors.New("file changed since the model saw it")
	ErrNoMatch  = errors.New("an edit did not match exactly one place")
	ErrConflict = errors.New("a file changed on disk between validation and apply")
)

// Problem is one reason a proposal cannot be applied.
type Problem struct {
	Path string      `json:"path,omitempty"`
	Edit int         `json:"edit"` // 0-based edit index, -1 for the file as a whole
	Kind RefusalKind `json:"kind"`
	// Message is written for the model and the person alike.
	Message string `json:"message"`
	// Search is the failed edit's search text (for feedback).
	Search string `json:"search,omitempty"`
	// Nearest are the file lines closest to a failed search, never applied.
	Nearest []NumberedLine `json:"nearest,omitempty"`
	// cause is the error behind the problem, for errors.Is.
	cause error
}

// ValidationError lists every problem found; nothing was written.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("proposal refused: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(displayPath(p.Path))
			if p.Edit >= 0 {
				fmt.Fprintf(&b, " edit %d", p.Edit+1)
			}
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// Is lets errors.Is(err, ErrStale) and friends see the problem kinds.
func (e *ValidationError) Is(target error) bool {
	for _, p := range e.Problems {
		switch {
		case target == ErrRefused:
			return true
		case target == ErrStale && p.Kind == RefusedStale:
			return true
		case target == ErrNoMatch && (p.Kind == RefusedNoMatch || p.Kind == RefusedAmbiguous || p.Kind == RefusedPlaceholder):
			return true
		case target == ErrChanged && p.Kind == RefusedChanged:
			return true
		case p.cause != nil && errors.Is(p.cause, target):
			return true
		}
	}
	return false
}

// SHA256Hex is the content hash proposals carry in base_sha256.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// CheckPath applies the built-in path rules: relative, clean, forward
// slashes, no "..", no ".git" component, valid UTF-8 without NUL, control
// or bidirectional-override characters. It returns the canonical path (a
// leading "./" removed).
func CheckPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if len(p) > 4096 {
		return "", errors.New("path longer than 4096 bytes")
	}
	if !utf8.ValidString(p) {
		return "", errors.New("path is not valid UTF-8")
	}
	for _, r := range p {
		if r == 0 || unicode.IsControl(r) || isBidi(r) {
			return "", fmt.Errorf("path contains the character %U", r)
		}
	}
	if strings.Contains(p, `\`) {
		return "", errors.New("path contains a backslash; use forward slashes")
	}
	if strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", errors.New("path is absolute; use a path relative to the project root")
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", errors.New("path contains \"..\"")
		}
		if strings.EqualFold(c, ".git") {
			return "", errors.New("path is inside a .git directory")
		}
	}
	if path.Clean(p) != p || p == "." {
		return "", errors.New("path is not clean (empty, \".\" or repeated slashes)")
	}
	return p, nil
}

func isBidi(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// gitMode maps a diff header mode to a file mode, refusing links.
func gitMode(m string) (fs.FileMode, error) {
	switch m {
	case "":
		return 0, nil
	case "100644", "644":
		return 0o644, nil
	case "100755", "755":
		return 0o755, nil
	case "120000":
		return 0, errors.New("symbolic links (mode 120000) cannot be created by a proposal")
	case "160000":
		return 0, errors.New("gitlinks / submodules (mode 160000) cannot be created by a proposal")
	}
	return 0, fmt.Errorf("file mode %q is not supported (use 100644 or 100755)", m)
}

// conflicts finds duplicate paths (also differing only in case) and a path
// that is a parent directory of another. It is linear in the number of
// path components.
func conflicts(paths []string) []Problem {
	var out []Problem
	seen := map[string]string{}
	for _, p := range paths {
		k := strings.ToLower(p)
		if prev, ok := seen[k]; ok {
			out = append(out, Problem{Path: p, Edit: -1, Kind: RefusedConflict, Message: fmt.Sprintf("the path appears more than once in the proposal (also as %q)", prev)})
			continue
		}
		seen[k] = p
	}
	for _, p := range paths {
		k := strings.ToLower(p)
		for i := strings.LastIndexByte(k, '/'); i > 0; i = strings.LastIndexByte(k[:i], '/') {
			if parent, ok := seen[k[:i]]; ok {
				out = append(out, Problem{Path: p, Edit: -1, Kind: RefusedConflict, Message: fmt.Sprintf("the proposal writes both %q and a file inside it", parent)})
				break
			}
		}
	}
	return out
}

// displayPath quotes a path holding characters that would garble or
// disguise a message (control and bidi characters).
func displayPath(p string) string {
	for _, r := range p {
		if unicode.IsControl(r) || isBidi(r) || r == utf8.RuneError {
			return strconv.Quote(p)
		}
	}
	return p
}
