package shell

import (
	"path"
	"strings"
)

// gitInvocation is a git command line with its global options peeled.
type gitInvocation struct {
	sub  string
	args []string
	dyn  []bool
	// configs are the -c key=value settings.
	configs []string
	// steering is set by global options that point git at other
	// repositories, config or programs (--git-dir, --exec-path, ...).
	steering bool
	dynamic  bool
}

func parseGit(args []string, dyn []bool) gitInvocation {
	var g gitInvocation
	i := 0
	for i < len(args) {
		a := args[i]
		if dyn[i] {
			g.dynamic = true
			return g
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		switch {
		case a == "-C":
			i += 2
			continue
		case a == "-c":
			if i+1 < len(args) {
				g.configs = append(g.configs, args[i+1])
				if dyn[i+1] {
					g.dynamic = true
				}
			}
			i += 2
			continue
		case a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path" || a == "--super-prefix" || a == "--config-env" || a == "--list-cmds":
			g.steering = true
			i += 2
			continue
		case strings.HasPrefix(a, "--git-dir=") || strings.HasPrefix(a, "--work-tree=") || strings.HasPrefix(a, "--exec-path=") ||
			strings.HasPrefix(a, "--config-env=") || strings.HasPrefix(a, "--namespace=") || strings.HasPrefix(a, "--super-prefix="):
			g.steering = true
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			g.configs = append(g.configs, a[2:])
		case strings.HasPrefix(a, "-C") && len(a) > 2:
		}
		i++
	}
	if i < len(args) {
		g.sub, g.args, g.dyn = args[i], args[i+1:], dyn[i+1:]
	}
	return g
}

// safeGitConfigPrefixes are -c settings that only change presentation.
var safeGitConfigPrefixes = []string{"color.", "advice.", "core.quotepath", "user.name", "user.email", "log.", "init.defaultbranch", "column.", "format.pretty", "i18n.", "diff.noprefix", "diff.renames", "status.short", "pager."}

func gitConfigSafe(kv string) bool {
	k, _, _ := strings.Cut(strings.ToLower(kv), "=")
	if k == "pager" || strings.HasPrefix(k, "pager.") {
		// pager.<cmd> may name a program to run.
		return false
	}
	for _, p := range safeGitConfigPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

var gitReadOnly = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "ls-tree": true,
	"blame": true, "grep": true, "describe": true, "shortlog": true, "cat-file": true, "rev-list": true,
	"merge-base": true, "name-rev": true, "for-each-ref": true, "show-ref": true, "version": true,
	"count-objects": true, "check-ignore": true, "check-attr": true, "whatchanged": true, "cherry": true,
	"diff-tree": true, "diff-files": true, "diff-index": true, "show-branch": true, "annotate": true,
}

// gitBranchListFlags are branch options that list without changing refs.
var gitBranchListFlags = map[string]bool{"-a": true, "-r": true, "-v": true, "-vv": true, "-l": true, "--list": true, "--all": true,
	"--remotes": true, "--verbose": true, "--show-current": true, "--no-color": true, "--color": true, "-q": true, "--quiet": true,
	"--contains": true, "--no-contains": true, "--merged": true, "--no-merged": true, "--points-at": true, "--sort": true, "--format": true,
	"--ignore-case": true, "--omit-empty": true, "--column": true, "--no-column": true, "--abbrev": true, "--no-abbrev": true}

func classifyGit(args []string, dyn []bool) classInfo {
	g := parseGit(args, dyn)
	if g.dynamic {
		return classInfo{unprovable: "git with a non-literal option"}
	}
	for _, c := range g.configs {
		if !gitConfigSafe(c) {
			return classInfo{unprovable: "git -c " + c + " can make git run programs"}
		}
	}
	info := classInfo{}
	if g.steering {
		info.unprovable = "git global options point it at other repositories or programs"
		return info
	}
	for i, a := range g.args {
		if v, ok := strings.CutPrefix(a, "--directory="); ok && g.sub == "apply" {
			info.targets = append(info.targets, Target{Path: v, Op: OpWrite, Dynamic: g.dyn[i]})
		}
		if strings.HasPrefix(a, "--output") || a == "-o" && g.sub == "format-patch" {
			info.writes = true
			v, ok := strings.CutPrefix(a, "--output=")
			if ok {
				info.targets = append(info.targets, Target{Path: v, Op: OpWrite, Dynamic: g.dyn[i]})
			} else if i+1 < len(g.args) {
				info.targets = append(info.targets, Target{Path: g.args[i+1], Op: OpWrite, Dynamic: g.dyn[i+1]})
			}
			return info
		}
		if a == "--ext-diff" || a == "-O" || strings.HasPrefix(a, "--open-files-in-pager") || strings.HasPrefix(a, "--exec") ||
			strings.HasPrefix(a, "--upload-pack") || strings.HasPrefix(a, "--receive-pack") {
			info.unprovable = "git " + g.sub + " " + a + " runs a program"
			return info
		}
	}
	if DestructiveGit(args, dyn) != "" {
		info.writes = true
		return info
	}
	switch g.sub {
	case "":
		info.readOnly = true
	case "branch":
		info.readOnly = gitBranchIsList(g.args)
		info.writes = !info.readOnly
	case "tag":
		info.readOnly = len(g.args) == 0 || anyArg(g.args, "-l", "--list") && !anyArgPrefix(g.args, "-d", "-a", "-s", "-f", "-m", "-u", "--delete", "--annotate", "--sign", "--force", "--message")
		info.writes = !info.readOnly
	case "remote":
		info.readOnly = len(g.args) == 0 || g.args[0] == "-v" || g.args[0] == "--verbose" || g.args[0] == "show" || g.args[0] == "get-url"
		info.writes = !info.readOnly
	case "config":
		info.readOnly = anyArgPrefix(g.args, "--get", "--list", "-l") || len(g.args) > 0 && (g.args[0] == "get" || g.args[0] == "list")
		info.writes = !info.readOnly
		if info.writes {
			info.targets = gitConfigTargets(g.args, g.dyn)
		}
	case "stash":
		info.readOnly = len(g.args) > 0 && (g.args[0] == "list" || g.args[0] == "show")
		info.writes = !info.readOnly
	case "reflog":
		info.readOnly = len(g.args) == 0 || g.args[0] == "show"
		info.writes = !info.readOnly
	case "worktree":
		info.readOnly = len(g.args) > 0 && g.args[0] == "list"
		info.writes = !info.readOnly
		if len(g.args) > 0 && g.args[0] == "add" {
			// The new worktree's directory is created: it must stay in
			// the workspace.
			if ops := operands(g.args[1:], g.dyn[1:], "bB", map[string]bool{"reason": true}); len(ops) > 0 {
				info.targets = append(info.targets, tgt(g.args[1:], g.dyn[1:], ops[0], OpWrite))
			}
		}
	case "clone":
		info.writes = true
		ops := operands(g.args, g.dyn, "obuj", map[string]bool{"origin": true, "branch": true, "upload-pack": true,
			"reference": true, "reference-if-able": true, "separate-git-dir": true, "depth": true, "shallow-since": true,
			"shallow-exclude": true, "jobs": true, "filter": true, "template": true, "config": true, "server-option": true, "bundle-uri": true})
		switch {
		case len(ops) >= 2:
			info.targets = append(info.targets, tgt(g.args, g.dyn, ops[1], OpWrite))
		case len(ops) == 1 && !g.dyn[ops[0]]:
			name := strings.TrimSuffix(path.Base(strings.TrimSuffix(g.args[ops[0]], "/")), ".git")
			info.targets = append(info.targets, Target{Path: name, Op: OpWrite})
		case len(ops) == 1:
			info.targets = append(info.targets, Target{Path: g.args[ops[0]], Op: OpWrite, Dynamic: true})
		}
		for i, a := range g.args {
			if v, ok := strings.CutPrefix(a, "--separate-git-dir="); ok {
				info.targets = append(info.targets, Target{Path: v, Op: OpWrite, Dynamic: g.dyn[i]})
			} else if a == "--separate-git-dir" && i+1 < len(g.args) {
				info.targets = append(info.targets, tgt(g.args, g.dyn, i+1, OpWrite))
			}
			if a == "--template" || strings.HasPrefix(a, "--template=") || a == "-c" || a == "--config" || strings.HasPrefix(a, "--config=") {
				info.unprovable = "git clone " + a + " installs configuration or hooks that can run programs"
			}
		}
	default:
		info.readOnly = gitReadOnly[g.sub]
		info.writes = !info.readOnly
	}
	return info
}

// gitConfigTargets returns the file a writing `git config` changes. A key
// that can make git run programs (core.hooksPath, core.pager, alias.*,
// core.fsmonitor, ...) written to the repository's config is a write to
// .git/config, which the gate protects like any other write there; the
// global, system and --file forms write the file they name.
func gitConfigTargets(args []string, dyn []bool) []Target {
	var out []Target
	local := true
	var ops []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case dyn[i] && strings.HasPrefix(a, "-"):
			return []Target{{Path: a, Op: OpWrite, Dynamic: true}}
		case a == "--global":
			out, local = append(out, Target{Path: "~/.gitconfig", Op: OpWrite}), false
		case a == "--system":
			out, local = append(out, Target{Path: "/etc/gitconfig", Op: OpWrite}), false
		case a == "--file" || a == "-f":
			if i+1 < len(args) {
				out, local = append(out, tgt(args, dyn, i+1, OpWrite)), false
				i++
			}
		case strings.HasPrefix(a, "--file="):
			out, local = append(out, Target{Path: a[len("--file="):], Op: OpWrite, Dynamic: dyn[i]}), false
		case a == "--worktree":
			out, local = append(out, Target{Path: ".git/config.worktree", Op: OpWrite}), false
		case a == "--type" || a == "--default" || a == "--comment" || a == "--blob" || a == "--value":
			i++
		case !strings.HasPrefix(a, "-"):
			ops = append(ops, i)
		}
	}
	if !local {
		return out
	}
	key := ""
	if len(ops) > 0 {
		key = args[ops[0]]
		switch key {
		case "set", "unset", "rename-section", "remove-section", "edit":
			key = ""
			if len(ops) > 1 && args[ops[0]] != "edit" {
				key = args[ops[1]]
			}
		}
	}
	if key == "" || !gitConfigSafe(key) {
		out = append(out, Target{Path: ".git/config", Op: OpWrite})
	}
	return out
}

func gitBranchIsList(args []string) bool {
	listing := len(args) == 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, _ := strings.Cut(a, "=")
		if !gitBranchListFlags[name] {
			// A positional is a pattern only after --list/-l, or a commit
			// after --contains and friends.
			if strings.HasPrefix(a, "-") || !listing {
				return false
			}
			continue
		}
		switch name {
		case "-l", "--list", "-a", "-r", "--all", "--remotes", "-v", "-vv", "--verbose", "--show-current":
			listing = true
		case "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format":
			listing = true
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
		}
	}
	return true
}

// DestructiveGit reports why a git argument list (after the program name)
// destroys work that cannot be recovered: reset --hard, clean -f, forced or
// deleting pushes, branch -D, checkout -f, reflog expire. It looks through
// the global options -C and -c. It returns "" for anything else.
func DestructiveGit(args []string, dyn []bool) string {
	g := parseGit(args, dyn)
	has := func(long string, short byte) bool {
		for _, a := range g.args {
			if a == long || strings.HasPrefix(a, long+"=") {
				return true
			}
			if short != 0 && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], short) >= 0 {
				return true
			}
		}
		return false
	}
	switch g.sub {
	case "reset":
		if has("--hard", 0) || has("--merge", 0) || has("--keep", 0) {
			return "git reset --hard discards uncommitted work"
		}
	case "clean":
		if has("--force", 'f') {
			return "git clean -f deletes untracked files"
		}
	case "push":
		if has("--force", 'f') || has("--force-with-lease", 0) || has("--mirror", 0) || has("--delete", 'd') || has("--prune", 0) {
			return "git push --force rewrites or deletes remote history"
		}
		for _, a := range g.args {
			if strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":") {
				return "git push with a forced or deleting refspec"
			}
		}
	case "branch":
		for _, a := range g.args {
			if a == "-D" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'D') {
				return "git branch -D deletes an unmerged branch"
			}
		}
		if has("--delete", 'd') && has("--force", 'f') {
			return "git branch -d --force deletes an unmerged branch"
		}
	case "checkout", "switch", "restore":
		if g.sub != "restore" && (has("--force", 'f') || has("--discard-changes", 0)) {
			return "git " + g.sub + " --force discards local changes"
		}
		if g.sub != "switch" {
			for _, a := range g.args {
				if a == "." || a == ":/" || a == "*" || a == ":(top)" {
					return "git " + g.sub + " " + a + " discards every uncommitted change"
				}
			}
		}
	case "reflog":
		if len(g.args) > 0 && (g.args[0] == "expire" || g.args[0] == "delete") {
			return "git reflog " + g.args[0] + " drops recovery points"
		}
	case "stash":
		if len(g.args) > 0 && (g.args[0] == "clear" || g.args[0] == "drop") {
			return "git stash " + g.args[0] + " deletes stashed work"
		}
	case "update-ref":
		if has("-d", 0) {
			return "git update-ref -d deletes a ref"
		}
	case "filter-branch", "filter-repo":
		return "git " + g.sub + " rewrites history"
	}
	return ""
}

// GitDirs returns the directories a git command runs in through -C, so
// that a caller can refuse a writing git command aimed outside the
// workspace.
func GitDirs(c Command) []string {
	if path.Base(c.Name) != "git" {
		return nil
	}
	var dirs []string
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		switch {
		case a == "-C" && i+1 < len(c.Args):
			dirs = append(dirs, c.Args[i+1])
			i++
		case a == "-c":
			i++
		case strings.HasPrefix(a, "-C") && len(a) > 2:
			dirs = append(dirs, a[2:])
		}
	}
	return dirs
}

// Destructive reports why a command destroys unrecoverable work, for
// commands the gate refuses in every mode (destructive git forms). Paths
// (catastrophic rm) are judged by the caller, which knows the workspace.
func Destructive(c Command) string {
	if path.Base(c.Name) == "git" {
		return DestructiveGit(c.Args, c.Dynamic)
	}
	return ""
}
