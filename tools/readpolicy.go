package tools

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// ReadPolicy judges reading one file or directory that a search tool
// (grep, glob, list_dir) meets inside a root the gate has already allowed.
// The gate judges only the root a call names; without this, a `Read(…)`
// deny or ask rule on secrets/ or .env would be bypassed by grepping the
// workspace. *permission.Gate implements it.
//
// ReadDecision gets the workspace directory and the entry's absolute path,
// already resolved (the walk never follows links), and returns
// engine.DecisionDeny when a deny rule or a safety check forbids reading
// it, engine.DecisionAsk when an ask rule covers it or it is a secret, and
// anything else (allow, or "" for no opinion) otherwise. The reason is
// shown to the model, so it should name the rule, not the path. It is
// called from concurrent tool calls and once per entry of a walk, so it
// must be safe for concurrent use and cheap (no path resolution).
type ReadPolicy interface {
	ReadDecision(workspace, resolvedAbsPath string) (engine.Decision, string)
}

// SetReadPolicy makes grep, glob and list_dir consult p for every entry
// they meet. With no policy, grep still never searches credential files.
func (e *Env) SetReadPolicy(p ReadPolicy) { e.readPolicy = p }

// ReadPolicy returns the policy SetReadPolicy set, or nil.
func (e *Env) ReadPolicy() ReadPolicy { return e.readPolicy }

// isCredentialPath reports whether a workspace-relative slash path names a
// credential file or lies in a credential directory, by the gate's one
// list (tools/permission/protected.go), so that what grep withholds and
// what the gate and the sandbox protect never drift apart.
func isCredentialPath(rel string) bool { return permission.IsCredentialPath(rel) }

// readFilter applies the read policy and the credential check to the
// entries of one search. It is used by one goroutine (the walker).
type readFilter struct {
	ws     string
	policy ReadPolicy
	// content is set for grep: entries whose content would be shown.
	content bool
	// rootWhy is the reason the root itself was asked about; the person
	// (or the permission mode) said yes to it, so entries asked about for
	// the same reason were covered by that yes.
	rootWhy string

	denied, asked, creds int
	// deniedWhy and askedWhy are the distinct reasons, in the order met.
	deniedWhy, askedWhy []string
}

// maxReasons bounds the reasons a note lists per kind.
const maxReasons = 3

// newReadFilter judges the root of a search and returns the filter for
// its entries. A root the policy denies is an error: the gate should have
// denied the call already, and the tool does not rely on that.
func newReadFilter(env *Env, root string, content bool) (*readFilter, error) {
	f := &readFilter{ws: env.WS.Dir(), policy: env.ReadPolicy(), content: content}
	if f.policy == nil {
		return f, nil
	}
	switch d, why := f.policy.ReadDecision(f.ws, f.abs(root)); d {
	case engine.DecisionDeny:
		return nil, fmt.Errorf("reading %s is denied: %s", displayPath(root), why)
	case engine.DecisionAsk:
		f.rootWhy = why
	}
	return f, nil
}

func (f *readFilter) abs(rel string) string {
	if rel == "." || rel == "" {
		return f.ws
	}
	return filepath.Join(f.ws, filepath.FromSlash(rel))
}

// dir reports whether a walk may descend into the directory rel.
func (f *readFilter) dir(rel string) bool {
	if f.content && permission.IsCredentialDir(path.Base(rel)) {
		f.creds++
		return false
	}
	return f.judge(rel, false)
}

// file reports whether the file rel may be shown: its content for grep,
// its name for glob.
func (f *readFilter) file(rel string) bool {
	if f.content && isCredentialPath(rel) {
		f.creds++
		return false
	}
	return f.judge(rel, f.content)
}

// name reports whether list_dir may show the entry rel (names only: a
// credential's name is no secret, a denied entry is not shown at all).
func (f *readFilter) name(rel string) bool { return f.judge(rel, false) }

func (f *readFilter) judge(rel string, content bool) bool {
	if f.policy == nil {
		return true
	}
	d, why := f.policy.ReadDecision(f.ws, f.abs(rel))
	switch d {
	case engine.DecisionDeny:
		f.denied++
		f.deniedWhy = addReason(f.deniedWhy, f.safeReason(why, rel))
		return false
	case engine.DecisionAsk:
		if !content || why == f.rootWhy && f.rootWhy != "" {
			return true
		}
		f.asked++
		f.askedWhy = addReason(f.askedWhy, f.safeReason(why, rel))
		return false
	}
	return true
}

// safeReason keeps a withheld entry's path out of the result: the model
// is told why something was withheld (the rule), not what.
func (f *readFilter) safeReason(why, rel string) string {
	if why == "" || strings.Contains(why, f.abs(rel)) {
		return "a rule covers it"
	}
	return why
}

// addReason adds why to reasons unless it is there or the list is full
// (one more than maxReasons marks that there were others).
func addReason(reasons []string, why string) []string {
	if slices.Contains(reasons, why) || len(reasons) > maxReasons {
		return reasons
	}
	return append(reasons, why)
}

func reasonList(reasons []string) string {
	if len(reasons) > maxReasons {
		return strings.Join(reasons[:maxReasons], ", ") + " and others"
	}
	return strings.Join(reasons, ", ")
}

// summary says what was withheld and why, or "" when nothing was.
func (f *readFilter) summary() string {
	var parts []string
	if f.denied > 0 {
		parts = append(parts, fmt.Sprintf("%d %s denied by the permission rules (%s)", f.denied, plural(f.denied, "entry", "entries"), reasonList(f.deniedWhy)))
	}
	if f.asked > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not searched, since reading %s needs a question (%s): use read_file, which asks",
			f.asked, plural(f.asked, "file", "files"), plural(f.asked, "it", "them"), reasonList(f.askedWhy)))
	}
	if f.creds > 0 {
		parts = append(parts, fmt.Sprintf("%d credential %s (.env*, keys, credential directories) not searched, since grep never shows a secret: use read_file, which asks",
			f.creds, plural(f.creds, "file or directory", "files or directories")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "(withheld: " + strings.Join(parts, "; ") + ")\n"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// displayPath quotes a path holding characters that must not reach a
// terminal or the model's view of a listing raw: a newline would forge an
// extra result line, an escape would drive the terminal, a bidirectional
// override would show a name other than the real one.
func displayPath(p string) string {
	if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return strconv.Quote(p)
	}
	return p
}
