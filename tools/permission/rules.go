package permission

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/tools/shell"
)

// Action is what a rule does when it matches.
type Action string

// Rule actions.
const (
	ActionAllow Action = "allow"
	ActionAsk   Action = "ask"
	ActionDeny  Action = "deny"
)

// Source says where a rule came from.
type Source string

// Rule sources. Project allow rules count only when the project is trusted.
const (
	SourceUser    Source = "user"
	SourceProject Source = "project"
	SourceCLI     Source = "cli"
	SourceSession Source = "session"
	SourceAlways  Source = "always"
)

// Rules are rule strings by action, as one source wrote them.
type Rules struct {
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Rule is one parsed rule in Claude Code's syntax: `Tool` or `Tool(spec)`.
type Rule struct {
	Raw    string
	Action Action
	Source Source
	Kind   Kind
	// Tool is the tool name as written (differs from Kind for mcp and
	// unknown tools).
	Tool string
	// Spec is the text between the parentheses; empty or "*" matches all.
	Spec string

	// Shell specs: prefix words (`git status:*`), a glob, or exact words.
	prefix []string
	glob   string
	exact  []string
	// domain is a WebFetch rule's normalised domain pattern.
	domain string
	// shell is a prefix or exact rule parsed like the command it names,
	// when the shell analysis models the program.
	shell *shellSpec
}

// String renders the rule with its source.
func (r Rule) String() string { return fmt.Sprintf("%s %s (%s)", r.Action, r.Raw, r.Source) }

// matchesAll reports whether the rule has no spec.
func (r Rule) matchesAll() bool { return r.Spec == "" || r.Spec == "*" }

// ParseRule parses a rule string.
func ParseRule(s string, action Action, source Source) (Rule, error) {
	s = strings.TrimSpace(s)
	r := Rule{Raw: s, Action: action, Source: source}
	name, spec, hasSpec := strings.Cut(s, "(")
	if hasSpec {
		if !strings.HasSuffix(spec, ")") {
			return Rule{}, fmt.Errorf("rule %q: missing closing parenthesis", s)
		}
		spec = strings.TrimSpace(spec[:len(spec)-1])
	}
	if name == "" {
		return Rule{}, fmt.Errorf("rule %q: no tool name", s)
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return Rule{}, fmt.Errorf("rule %q: invalid tool name %q", s, name)
		}
	}
	if strings.ContainsFunc(spec, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return Rule{}, fmt.Errorf("rule %q: control characters in the rule", s)
	}
	r.Tool, r.Spec, r.Kind = name, spec, KindOf(name)
	if r.Kind == KindBash && !r.matchesAll() {
		switch {
		case strings.HasSuffix(spec, ":*"):
			r.prefix = specWords(strings.TrimSuffix(spec, ":*"))
			if len(r.prefix) == 0 {
				return Rule{}, fmt.Errorf("rule %q: empty command prefix", s)
			}
		case strings.Contains(spec, "*"):
			r.glob = spec
		default:
			r.exact = specWords(spec)
		}
		if r.prefix != nil {
			r.shell = parseShellSpec(r.prefix)
		} else if r.exact != nil {
			r.shell = parseShellSpec(r.exact)
		}
	}
	if r.Kind == KindWebFetch && !r.matchesAll() {
		d, err := domainPattern(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", s, err)
		}
		r.domain = d
	}
	return r, nil
}

// specWords splits a command spec into words with shell quoting rules, so
// that `Bash(git commit -m "x y")` compares like the command would.
func specWords(spec string) []string {
	a := shell.Analyze(spec)
	if a.Provable() && len(a.Commands) == 1 && !a.Commands[0].HasDynamic() && len(a.Commands[0].Wrappers) == 0 {
		return append([]string{a.Commands[0].Name}, a.Commands[0].Args...)
	}
	return strings.Fields(spec)
}

// parseRules parses one source's rules.
func parseRules(rs Rules, source Source) ([]Rule, error) {
	var out []Rule
	for _, l := range []struct {
		list   []string
		action Action
	}{{rs.Deny, ActionDeny}, {rs.Ask, ActionAsk}, {rs.Allow, ActionAllow}} {
		for _, s := range l.list {
			r, err := ParseRule(s, l.action, source)
			if err != nil {
				return nil, fmt.Errorf("%s rules: %w", source, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// matchResult is a rule's verdict on one sub-command.
type matchResult int

const (
	noMatch matchResult = iota
	// maybeMatch: a non-literal word could make the rule match.
	maybeMatch
	match
)

// matchCommand matches a Bash rule against one command's words. For deny
// and ask rules the program is compared by basename (`/bin/rm` is rm);
// for allow rules it must be a bare name, and non-literal words never
// match outside a `:*` tail.
func (r Rule) matchCommand(words []string, dyn []bool, forAllow bool) matchResult {
	if len(words) == 0 {
		return noMatch
	}
	name := words[0]
	if forAllow {
		if strings.Contains(name, "/") || dyn[0] {
			return noMatch
		}
	} else {
		name = path.Base(name)
	}
	if r.matchesAll() {
		return match
	}
	w := append([]string{name}, words[1:]...)
	switch {
	case r.prefix != nil:
		if len(w) < len(r.prefix) {
			return noMatch
		}
		res := match
		for i, p := range r.prefix {
			if dyn[i] {
				if forAllow {
					return noMatch
				}
				res = maybeMatch
				continue
			}
			if w[i] != p {
				return noMatch
			}
		}
		return res
	case r.exact != nil:
		if len(w) != len(r.exact) {
			return noMatch
		}
		res := match
		for i, p := range r.exact {
			if dyn[i] {
				if forAllow {
					return noMatch
				}
				res = maybeMatch
				continue
			}
			if w[i] != p {
				return noMatch
			}
		}
		return res
	default:
		for _, d := range dyn {
			if d {
				if forAllow {
					return noMatch
				}
				first := strings.Fields(r.glob)
				if len(first) > 0 && wildcard(first[0], name) {
					return maybeMatch
				}
				return noMatch
			}
		}
		if wildcard(r.glob, strings.Join(w, " ")) {
			return match
		}
		return noMatch
	}
}

// programWord returns the literal program name a deny rule names, if any.
func (r Rule) programWord() string {
	switch {
	case r.prefix != nil:
		return r.prefix[0]
	case r.exact != nil:
		return r.exact[0]
	case r.glob != "":
		f := strings.Fields(r.glob)
		if len(f) > 0 && !strings.Contains(f[0], "*") {
			return f[0]
		}
	}
	return ""
}

// wildcard matches s against a pattern where * matches any run of
// characters (spaces and slashes included).
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		k := strings.Index(s, parts[i])
		if k < 0 {
			return false
		}
		s = s[k+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// pathPattern turns a path rule's spec into an absolute slash pattern.
// `//x` is absolute, `~/x` is under home, `/x`, `./x` and `x/y` are under
// the workspace, and a pattern without a slash matches at any depth.
func pathPattern(spec, workspace, home string) string {
	switch {
	case strings.HasPrefix(spec, "//"):
		return path.Clean(spec[1:])
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		return path.Clean(filepath.ToSlash(home) + spec[1:])
	case strings.HasPrefix(spec, "/"), strings.HasPrefix(spec, "./"):
		return path.Clean(filepath.ToSlash(workspace) + "/" + strings.TrimPrefix(spec, "."))
	case !strings.Contains(spec, "/"):
		return path.Clean(filepath.ToSlash(workspace)) + "/**/" + spec
	}
	return path.Clean(filepath.ToSlash(workspace) + "/" + spec)
}

// matchPath matches an absolute path against a pattern: `*` stays within
// a path component, `**` spans any number of them. A pattern naming a
// directory also matches everything below it.
func matchPath(pattern, p string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(p, "/"), "/")
	if p == "/" {
		xs = nil
	}
	return matchSegs(ps, xs)
}

func matchSegs(ps, xs []string) bool {
	if len(ps) == 0 {
		// Everything below a matched directory matches too.
		return true
	}
	if ps[0] == "**" {
		for k := 0; k <= len(xs); k++ {
			if matchSegs(ps[1:], xs[k:]) {
				return true
			}
		}
		return false
	}
	if len(xs) == 0 {
		return false
	}
	ok, err := path.Match(ps[0], xs[0])
	if err != nil || !ok {
		return false
	}
	return matchSegs(ps[1:], xs[1:])
}

// matchToolName matches a rule for a tool with no spec semantics (mcp
// tools and unknown tools): exact name, `mcp__server` for all of a
// server's tools, or a trailing `*`.
func (r Rule) matchToolName(tool string) bool {
	switch {
	case r.Tool == tool || slices.Contains(toolAliases[r.Tool], tool):
		return r.matchesAll()
	case strings.HasSuffix(r.Tool, "*"):
		return strings.HasPrefix(tool, strings.TrimSuffix(r.Tool, "*")) && r.matchesAll()
	case strings.HasPrefix(r.Tool, "mcp__") && strings.Count(r.Tool, "__") == 1:
		return strings.HasPrefix(tool, r.Tool+"__") && r.matchesAll()
	}
	return false
}

// toolAliases are the other agents' names of a tool that a rule written
// with Claude Code's name also covers: one `WebSearch` rule governs kz's
// web_search, Codex's web_search and Gemini CLI's google_web_search.
var toolAliases = map[string][]string{
	"WebSearch": {"web_search", "google_web_search"},
}
