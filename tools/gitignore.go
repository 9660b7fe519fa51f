package tools

import (
	"path"
	"strings"
)

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	// base is the directory of the .gitignore, workspace-relative with
	// slashes ("" for the workspace root).
	base    string
	negate  bool
	dirOnly bool
	// segs is the pattern split on "/"; a pattern without a slash is
	// prefixed with "**" so it matches at any depth below base.
	segs []string
}

// parseGitignore parses the content of base/.gitignore. It implements the
// parts of gitignore(5) a search needs: comments, negation, trailing-slash
// directory patterns, anchoring by a slash, "*", "?", "[...]" and "**".
func parseGitignore(base, content string) []ignoreRule {
	var rules []ignoreRule
	for line := range strings.Lines(content) {
		line = strings.TrimRight(line, "\r\n")
		// Trailing spaces are ignored unless escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		r.segs = strings.Split(line, "/")
		if !anchored {
			r.segs = append([]string{"**"}, r.segs...)
		}
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether the workspace-relative slash path p is ignored by
// rules (in order, the last matching rule wins).
func ignored(rules []ignoreRule, p string, isDir bool) bool {
	ign := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		rel := p
		if r.base != "" {
			if !strings.HasPrefix(p, r.base+"/") {
				continue
			}
			rel = p[len(r.base)+1:]
		}
		if matchSegs(r.segs, strings.Split(rel, "/")) {
			ign = !r.negate
		}
	}
	return ign
}

// matchSegs matches a pattern split on "/" against a path split on "/",
// where a "**" segment matches zero or more path segments.
func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegs(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
