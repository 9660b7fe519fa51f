package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/shell"
)

// The safety stage's judgement of what the shell analysis reports beyond
// writes: files read as arguments (outside the workspace: ask; a
// credential: deny), globs and recursive reads expanded against the file
// system, secrets that are not files (the environment), git run on
// another repository, and relative writes under a working directory the
// analysis could not follow.

// Bounds on the file system work one decision may do; beyond them the
// request is asked.
const (
	// maxGlobAlternatives caps brace expansion.
	maxGlobAlternatives = 64
	// maxScanEntries caps the directory entries read to expand globs and
	// to look for credentials below a recursive read.
	maxScanEntries = 20000
)

// verdict is one check's opinion; an empty decision says nothing.
type verdict struct {
	decision engine.Decision
	reason   string
}

func askV(reason string) verdict  { return verdict{engine.DecisionAsk, reason} }
func denyV(reason string) verdict { return verdict{engine.DecisionDeny, reason} }

// by names the command a target belongs to, for reasons.
func by(t target) string {
	if t.By == "" || t.By == "redirect" {
		return "a redirection"
	}
	return "`" + t.By + "`"
}

// shellRead judges a literal read target of a shell command.
func (e *eval) shellRead(t target) verdict {
	if why := procSecret(t.resolved); why != "" {
		return denyV(by(t) + " reads " + t.Path + ": " + why)
	}
	if !within(e.ws, t.resolved) {
		if t.Meta {
			return askV(by(t) + " lists " + t.Path + ", outside the workspace")
		}
		if why, cred := e.protection(t.resolved); cred {
			return denyV(by(t) + " reads " + t.Path + ", which no command may read: " + why)
		}
		return askV(by(t) + " reads " + t.Path + ", outside the workspace")
	}
	if t.Meta {
		return verdict{}
	}
	if why, cred := e.protection(t.resolved); cred {
		return denyV(by(t) + " reads " + t.Path + ", which no command may read: " + why)
	}
	if t.Recursive {
		return e.recursiveRead(t, t.resolved)
	}
	return verdict{}
}

// procSecret says why a path under /proc or /dev exposes another
// process's memory or environment, or "".
func procSecret(p string) string {
	switch p {
	case "/dev/mem", "/dev/kmem", "/dev/port":
		return "physical memory"
	}
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return ""
	}
	comps := strings.Split(rest, "/")
	if len(comps) < 2 {
		return ""
	}
	switch comps[len(comps)-1] {
	case "environ":
		return "a process's environment, where credentials live"
	case "mem", "pagemap":
		return "a process's memory"
	}
	return ""
}

// globRead judges a read whose path is a glob: every match must be inside
// the workspace, not a credential, and not a name that becomes an option.
func (e *eval) globRead(t target, dotGlob bool) verdict {
	pat := t.Path
	if strings.HasPrefix(pat, "~") {
		pat = expandHome(pat, e.home)
	}
	if !filepath.IsAbs(pat) {
		// Not filepath.Join: it would drop a trailing slash, which
		// restricts the pattern to directories.
		pat = e.ws + "/" + pat
	}
	alts, ok := expandBraces(pat, maxGlobAlternatives)
	if !ok {
		return askV(by(t) + " reads " + t.Path + ", a pattern too large to check")
	}
	budget := maxScanEntries
	for _, alt := range alts {
		matches, err := globMatches(alt, dotGlob, &budget)
		if err != nil {
			return askV(by(t) + " reads " + t.Path + ", which cannot be checked: " + err.Error())
		}
		for _, m := range matches {
			if strings.HasPrefix(filepath.Base(m), "-") {
				return askV(by(t) + " reads " + t.Path + ", which matches " + filepath.Base(m) + ", a name the program would take as an option")
			}
			r, err := resolvePath(e.ws, m, e.home)
			if err != nil {
				return askV("cannot resolve " + m + ": " + err.Error())
			}
			u := t
			u.Path, u.resolved = m, r
			v := e.shellRead(u)
			if v.decision != "" {
				// A pattern is not a literal credential: ask.
				return askV(by(t) + " reads " + t.Path + ", which matches " + m + ": " + v.reason)
			}
		}
	}
	return verdict{}
}

// globMatches expands one absolute pattern against the file system the
// way bash does (with dotglob when the script may have set it).
func globMatches(pat string, dotGlob bool, budget *int) ([]string, error) {
	dirOnly := strings.HasSuffix(pat, "/")
	comps := strings.Split(strings.Trim(pat, "/"), "/")
	cur := []string{"/"}
	for k, c := range comps {
		// A trailing slash matches directories only.
		last := k == len(comps)-1 && !dirOnly
		if c == "" {
			continue
		}
		if !hasMeta(c) {
			for i := range cur {
				cur[i] = filepath.Join(cur[i], unescapeGlob(c))
			}
			continue
		}
		if c == "**" && dotGlob {
			return nil, errors.New("a recursive pattern")
		}
		var next []string
		for _, d := range cur {
			ents, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			*budget -= len(ents)
			if *budget < 0 {
				return nil, errors.New("too many files")
			}
			for _, ent := range ents {
				n := ent.Name()
				if strings.HasPrefix(n, ".") && !dotGlob && !strings.HasPrefix(c, ".") {
					continue
				}
				if ok, err := globMatch(c, n, dotGlob); err != nil {
					return nil, err
				} else if ok && (last || ent.IsDir() || ent.Type()&fs.ModeSymlink != 0) {
					next = append(next, filepath.Join(d, n))
				}
			}
		}
		cur = next
	}
	return cur, nil
}

func globMatch(pat, name string, fold bool) (bool, error) {
	if fold {
		pat, name = strings.ToLower(pat), strings.ToLower(name)
	}
	ok, err := filepath.Match(pat, name)
	if err != nil {
		return false, errors.New("a pattern kz cannot read")
	}
	return ok, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

func unescapeGlob(s string) string { return strings.ReplaceAll(s, `\`, "") }

// expandBraces expands bash brace lists ({a,b}) in p, up to max results;
// ranges ({1..9}) and anything odd are refused.
func expandBraces(p string, max int) ([]string, bool) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			inner := p[open+1 : i]
			alts := splitTopComma(inner)
			if len(alts) < 2 {
				if strings.Contains(inner, "..") {
					return nil, false
				}
				continue
			}
			var out []string
			for _, a := range alts {
				sub, ok := expandBraces(p[:open]+a+p[i+1:], max)
				if !ok {
					return nil, false
				}
				out = append(out, sub...)
				if len(out) > max {
					return nil, false
				}
			}
			return out, true
		}
	}
	return []string{p}, true
}

func splitTopComma(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// recursiveRead looks below a directory read recursively (grep -r, rg,
// diff -r) for credential files, within a bound, and for kz's own
// directories and the home's credential files.
func (e *eval) recursiveRead(t target, root string) verdict {
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return verdict{}
	}
	for _, d := range slices.Concat(e.g.protectedDirs, e.g.homeCreds) {
		if !within(root, d) {
			continue
		}
		if _, err := os.Lstat(d); err == nil {
			rel, _ := filepath.Rel(e.ws, d)
			return askV(by(t) + " reads everything below " + t.Path + ", which holds " + rel + ", hidden from every command")
		}
	}
	budget := maxScanEntries
	found := ""
	errStop := errors.New("stop")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		budget--
		if budget < 0 {
			return errStop
		}
		if p != root && t.SkipsHidden && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if p != root && isCredential(strings.ToLower(d.Name())) || d.IsDir() && credDirs[strings.ToLower(d.Name())] {
			found = p
			return errStop
		}
		return nil
	})
	switch {
	case found != "":
		rel, _ := filepath.Rel(e.ws, found)
		return askV(by(t) + " reads everything below " + t.Path + ", which holds the credential " + rel)
	case errors.Is(err, errStop):
		return askV(by(t) + " reads everything below " + t.Path + ", too many files to check for credentials")
	}
	return verdict{}
}

// unknownCwdWrite says why a relative write made where the working
// directory is unknown may land in a protected place: after `cd .git`
// hidden in an eval or a function, `config` is .git/config.
func unknownCwdWrite(p string) string {
	clean := filepath.ToSlash(filepath.Clean(p))
	comps := strings.Split(strings.ToLower(clean), "/")
	if comps[0] == ".." {
		return "it may be outside the workspace"
	}
	if _, why := protectedSuffix(comps); why != "" {
		return why
	}
	return ""
}

// gitDirNames are the files and directories found inside a git directory:
// a relative path starting with one may be inside .git. The map is built on
// first use, so that every kz process does not pay for it at start.
var gitDirNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"config": true, "config.worktree": true, "hooks": true, "info": true,
		"head": true, "index": true, "objects": true, "refs": true, "packed-refs": true, "modules": true,
		"worktrees": true, "description": true, "fetch_head": true, "orig_head": true, "commondir": true,
		"gitdir": true, "shallow": true, "logs": true, "branches": true, "commit_editmsg": true}
})

// agentDirFiles are names found inside agent configuration directories
// (.claude/settings.json, .vscode/tasks.json, .kz/config.toml). The map is
// built on first use, so that every kz process does not pay for it at
// start.
var agentDirFiles = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"settings.json": true, "settings.local.json": true, "tasks.json": true,
		"launch.json": true, "config.toml": true, "mcp.json": true, "commands": true, "agents": true,
		"hooks.json": true, "config.json": true, "auth.json": true, "extensions.json": true}
})

// protectedSuffix reports a relative path that would be protected if the
// working directory were a .git, .kz, agent or home directory.
func protectedSuffix(comps []string) (string, string) {
	for _, c := range comps {
		if c == ".git" || c == ".kz" || agentDirs[c] || credDirs[c] {
			return c, "it names " + c
		}
	}
	first, base := comps[0], comps[len(comps)-1]
	switch {
	case gitDirNames()[first]:
		return first, "it may be inside a .git directory"
	case agentDirFiles()[first]:
		return first, "it may be inside an agent or kz configuration directory"
	case rcFiles[base] || agentFiles[base]:
		return base, "it may be a shell startup or agent configuration file"
	case isCredential(base):
		return base, "it may be a credential file"
	}
	return "", ""
}

// foreignGit says why a git command may run on a repository other than
// the workspace's own, whose configuration can run programs
// (core.fsmonitor, core.pager, ...): -C or a cd into a directory holding
// its own repository (a .git directory or file, or a bare repository).
func (e *eval) foreignGit(c shell.Command) string {
	if filepath.Base(c.Name) != "git" {
		return ""
	}
	if c.DirUnknown {
		return "`" + c.String() + "` runs git in a directory the analysis cannot follow"
	}
	for _, d := range c.Dirs {
		r, err := resolvePath(e.ws, d, e.home)
		if err != nil {
			return "`" + c.String() + "` runs git in " + d + ", which cannot be resolved"
		}
		if !within(e.ws, r) {
			return "`" + c.String() + "` runs git in " + d + ", outside the workspace"
		}
		if r == e.ws {
			continue
		}
		if _, err := os.Lstat(r); err != nil {
			// The line creates the directory: what it will hold is
			// not known.
			return "`" + c.String() + "` runs git in " + d + ", which does not exist yet"
		}
		for dir := r; dir != e.ws && within(e.ws, dir); dir = filepath.Dir(dir) {
			rel, _ := filepath.Rel(e.ws, dir)
			if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || looksLikeGitDir(dir) {
				return "`" + c.String() + "` runs git on the repository in " + rel + ", not the workspace's, and its configuration can run programs"
			}
			if w := e.makesRepository(dir); w != "" {
				return "`" + c.String() + "` runs git in " + rel + ", where the same command line writes " + w + ", which can make it a repository of its own"
			}
		}
	}
	return ""
}

// repoMarkers are the names that make a directory a git repository to git's
// discovery (a .git entry, or a bare repository's HEAD, objects, refs and
// config). The map is built on first use, so that every kz process does not
// pay for it at start.
var repoMarkers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{".git": true, "head": true, "objects": true, "refs": true, "config": true,
		"commondir": true, "gitdir": true}
})

// makesRepository returns a path the command line writes that would make
// dir a repository (dir/HEAD, dir/config, dir/objects/...), or one it
// writes where the analysis cannot tell.
func (e *eval) makesRepository(dir string) string {
	for _, t := range e.tgts {
		if t.Op == shell.OpRead || shell.IsHarmlessDevice(t.Path) {
			continue
		}
		if t.Dynamic || t.resolved == "" {
			return t.Path
		}
		for p := t.resolved; within(dir, p) && p != dir; p = filepath.Dir(p) {
			if filepath.Dir(p) == dir && repoMarkers()[strings.ToLower(filepath.Base(p))] {
				return t.Path
			}
		}
	}
	return ""
}

// shellChecks runs the checks of this file over a shell request and
// returns the strictest opinion (the first deny, else the first ask).
func (e *eval) shellChecks() verdict {
	var ask verdict
	note := func(v verdict) bool {
		if v.decision == engine.DecisionDeny {
			return true
		}
		if v.decision == engine.DecisionAsk && ask.decision == "" {
			ask = v
		}
		return false
	}
	for _, t := range e.tgts {
		switch {
		case t.Op != shell.OpRead && t.UnknownCwd:
			if why := unknownCwdWrite(t.Path); why != "" {
				return denyV(by(t) + " writes " + t.Path + " where the working directory is unknown (after eval, source, a function, trap, pushd +N, cd - or find -execdir), and " + why)
			}
		case t.Op != shell.OpRead || t.file || shell.IsHarmlessDevice(t.Path):
		case t.Glob:
			if note(e.globRead(t, e.an.GlobOptions)) {
				return e.globRead(t, e.an.GlobOptions)
			}
		case t.Dynamic || t.err != nil || t.resolved == "":
		default:
			if v := e.shellRead(t); note(v) {
				return v
			}
		}
	}
	for _, c := range e.an.Commands {
		if why := e.foreignGit(c); why != "" {
			note(askV(why))
		}
	}
	if len(e.an.Secrets) > 0 {
		note(askV("the command reads secrets: " + e.an.Secrets[0]))
	}
	return ask
}
