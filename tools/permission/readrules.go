package permission

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/shell"
)

// Read(…) deny and ask rules apply to every read, whatever the tool: a
// file tool's path (read_file, and the root of grep, glob and list_dir,
// whose results the tools filter themselves with ReadDecision), and a shell
// command's read targets (redirections and the files the analysis knows a
// program reads). A literal argument of a shell command that names a path
// the rule covers, but that the analysis does not know to be read, may be
// read all the same (`nl secret/a`, an unknown program): that is asked.

// matchReads matches a Read deny or ask rule against the request's reads.
func (e *eval) matchReads(r Rule) (matchResult, string) {
	all := r.matchesAll()
	pat := ""
	if !all {
		pat = pathPattern(r.Spec, e.ws, e.home)
	}
	best, why := noMatch, ""
	for _, t := range e.tgts {
		if t.Op != shell.OpRead || shell.IsHarmlessDevice(t.Path) {
			continue
		}
		if t.resolved != "" && t.err == nil {
			if all || matchPath(pat, t.resolved) {
				if t.file {
					return match, "the path " + t.Path + " matches the rule"
				}
				return match, "the command reads " + t.Path + ", which the rule covers"
			}
			continue
		}
		if t.Dynamic && best == noMatch && (all || e.dynamicMayMatch(pat, t.Path)) {
			best, why = maybeMatch, "the command reads "+t.Path+", which may be a path the rule covers"
		}
	}
	if best == noMatch && !all && e.an != nil {
		if c, a := e.argCovered(pat); a != "" {
			best, why = maybeMatch, "`"+c+"` names "+a+", which the rule covers"
		}
	}
	return best, why
}

// argCovered returns a command and a literal argument of it that resolves
// to a path the pattern covers.
func (e *eval) argCovered(pat string) (string, string) {
	for _, c := range e.an.Commands {
		for i, a := range c.Args {
			if c.IsDynamic(i) {
				continue
			}
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
				a = v
			}
			if a == "" || a == "-" || strings.HasPrefix(a, "-") || hasControl(a) || shell.IsHarmlessDevice(a) {
				continue
			}
			if res, err := resolvePath(e.ws, a, e.home); err == nil && matchPath(pat, res) {
				return c.String(), a
			}
		}
	}
	return "", ""
}

// dynamicMayMatch reports whether a non-literal path (a glob, a variable)
// could expand to a path the pattern covers. A variable or a substitution
// can be anything; a glob is compared segment by segment from its literal
// directory.
func (e *eval) dynamicMayMatch(pat, p string) bool {
	if strings.ContainsAny(p, "$`") {
		return true
	}
	pre := staticPrefix(p)
	base := e.ws
	if pre != "" {
		r, err := resolvePath(e.ws, pre, e.home)
		if err != nil {
			return true
		}
		base = r
	} else if strings.HasPrefix(p, "~") {
		base = e.home
	}
	rest := strings.TrimPrefix(p, pre)
	if pre == "" && strings.HasPrefix(p, "/") {
		base, rest = "/", strings.TrimPrefix(p, "/")
	}
	full := strings.Split(strings.Trim(filepath.ToSlash(base), "/"), "/")
	if base == "/" {
		full = nil
	}
	full = append(full, strings.Split(strings.Trim(rest, "/"), "/")...)
	return globsIntersect(strings.Split(strings.Trim(pat, "/"), "/"), full)
}

// globsIntersect reports whether two slash patterns could match a common
// path (or the second, a path below the first's match): `**` spans any
// segments, and two segments intersect when either matches the other or
// both hold wildcards. It errs towards true.
func globsIntersect(ps, xs []string) bool {
	switch {
	case len(ps) == 0:
		return true
	case ps[0] == "**":
		for k := 0; k <= len(xs); k++ {
			if globsIntersect(ps[1:], xs[k:]) {
				return true
			}
		}
		return false
	case len(xs) == 0:
		return false
	case xs[0] == "**" || strings.ContainsAny(xs[0], "{"):
		// Brace expansion and ** in the command: anything.
		return true
	}
	if !segmentsIntersect(ps[0], xs[0]) {
		return false
	}
	return globsIntersect(ps[1:], xs[1:])
}

func segmentsIntersect(a, b string) bool {
	if ok, err := path.Match(a, b); err != nil || ok {
		return true
	}
	if ok, err := path.Match(b, a); err != nil || ok {
		return true
	}
	return strings.ContainsAny(a, "*?[") && strings.ContainsAny(b, "*?[")
}

// ReadDecision says whether a tool may read a file it came across (a
// result of grep, glob or list_dir under a root the gate allowed): deny
// when a Read deny rule covers it or it is a secret (a credential, the
// home's credential files, kz's own configuration and data), ask when a Read
// ask rule covers it, "" otherwise. The second value names the rule or
// the reason. The path must be absolute and resolved (symlinks followed).
func (g *Gate) ReadDecision(workspace, resolvedAbsPath string) (engine.Decision, string) {
	ws := g.resolveWorkspace(workspace)
	p := filepath.Clean(resolvedAbsPath)
	g.mu.RLock()
	rules := g.rules
	g.mu.RUnlock()
	var ask string
	for _, r := range rules {
		if r.Kind != KindRead || r.Action == ActionAllow {
			continue
		}
		if !r.matchesAll() && !matchPath(pathPattern(r.Spec, ws, g.home), p) {
			continue
		}
		if r.Action == ActionDeny {
			return engine.DecisionDeny, r.String()
		}
		if ask == "" {
			ask = r.String()
		}
	}
	if why := g.secret(p); why != "" {
		return engine.DecisionDeny, why
	}
	if ask != "" {
		return engine.DecisionAsk, ask
	}
	return "", ""
}

// credentialPath says why a path is a credential (a credential file, or a
// file in a credentials directory), or "".
func credentialPath(p string) string {
	if !IsCredentialPath(filepath.ToSlash(p)) {
		// The common answer, without allocating: this runs for every
		// entry a search meets (ReadDecision).
		return ""
	}
	comps := strings.Split(strings.ToLower(strings.Trim(filepath.ToSlash(p), "/")), "/")
	for _, c := range comps {
		if credDirs[c] {
			return "the path is in a credentials directory (" + c + ")"
		}
	}
	if base := comps[len(comps)-1]; isCredential(base) {
		return "the path looks like a credential (" + base + ")"
	}
	return ""
}

// ReadDenyRoots returns the absolute paths that Read deny rules name up to
// their first wildcard (`Read(./secret/**)` gives <workspace>/secret,
// `Read(~/notes.txt)` gives <home>/notes.txt), for the OS sandbox to hide
// from shell commands as it hides credentials: a command that reads a
// parent directory (`grep -r x .`, `tar c .`) would otherwise see what the
// rule denies. Rules that match at any depth (`Read(.env)`) and rules
// whose root would be the workspace, one of its parents or the home
// directory have none.
func (g *Gate) ReadDenyRoots(workspace string) []string {
	ws := g.resolveWorkspace(workspace)
	g.mu.RLock()
	rules := g.rules
	g.mu.RUnlock()
	var out []string
	for _, r := range rules {
		if r.Kind != KindRead || r.Action != ActionDeny || r.matchesAll() {
			continue
		}
		var lit []string
		for _, s := range strings.Split(pathPattern(r.Spec, ws, g.home), "/") {
			if strings.ContainsAny(s, "*?[") {
				break
			}
			lit = append(lit, s)
		}
		root := filepath.Clean("/" + path.Join(lit...))
		if within(root, ws) || root == g.home || slices.Contains(out, root) {
			continue
		}
		out = append(out, root)
	}
	return out
}
