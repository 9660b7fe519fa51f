package shell

import (
	"path"
	"strings"
	"sync"
)

// gitInvocation is a git command line with its global options parsed by
// the git model.
type gitInvocation struct {
	p    Parsed
	sub  string
	args []string
	dyn  []bool
	// off is the index in the full argument list of args[0].
	off int
}

func parseGit(args []string, dyn []bool) gitInvocation {
	g := gitInvocation{p: ParseArgs("git", args, dyn), off: len(args)}
	if g.p.SubIndex >= 0 {
		g.sub = g.p.Sub
		g.off = g.p.SubIndex + 1
		g.args, g.dyn = args[g.off:], dyn[g.off:]
	}
	return g
}

// has reports a flag of the sub-command by canonical name.
func (g gitInvocation) has(name string) bool {
	for _, f := range g.p.Flags {
		if !f.Global && f.Name == name {
			return true
		}
	}
	return false
}

// operands returns the sub-command's operands as words, after the
// nested action words (`stash list`).
func (g gitInvocation) operands() []int {
	var out []int
	for _, i := range g.p.Operands {
		if i >= g.off {
			out = append(out, i-g.off)
		}
	}
	return out
}

// action is the sub-command's first operand (stash list, worktree add,
// remote show), or "".
func (g gitInvocation) action() string {
	ops := g.operands()
	if len(ops) == 0 || g.dyn[ops[0]] {
		return ""
	}
	return g.args[ops[0]]
}

// gitReadOnly lists the sub-commands that only read the repository, when
// their every option is known and harmless. The map is built on first use,
// so that every kz process does not pay for it at start.
var gitReadOnly = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "ls-tree": true,
		"blame": true, "grep": true, "describe": true, "shortlog": true, "cat-file": true, "rev-list": true,
		"merge-base": true, "name-rev": true, "for-each-ref": true, "show-ref": true, "version": true,
		"count-objects": true, "check-ignore": true, "check-attr": true, "whatchanged": true, "cherry": true,
		"diff-tree": true, "diff-files": true, "diff-index": true, "show-branch": true, "annotate": true,
	}
})

// gitContent are the sub-commands whose path operands have their content
// shown (a credential named there is read); gitPatch are the options
// that make the log family show content.
var (
	gitContent = map[string]bool{"diff": true, "show": true, "blame": true, "annotate": true, "grep": true,
		"cat-file": true, "diff-tree": true, "diff-files": true, "diff-index": true}
	gitPatch = []string{"--patch", "--unified", "--patch-with-stat", "--patch-with-raw", "--word-diff",
		"--color-words", "--full-diff", "--cc", "-c", "--dd", "--remerge-diff", "--diff-merges", "-m", "--stat", "--numstat"}
)

// classifyGit classifies a git command line: global options that point
// git at other repositories or configuration make it unprovable, the
// sub-command decides whether it only reads, and the paths it names
// (pathspecs, REV:path) are read targets.
func classifyGit(args []string, dyn []bool) classInfo {
	g := parseGit(args, dyn)
	c := &classCtx{base: "git", args: g.args, dyn: g.dyn}
	for _, f := range g.p.Flags {
		if !f.Global {
			continue
		}
		switch f.Name {
		case "-c", "--config-env":
			c.unprovable("git " + f.Name + " " + f.Value + " sets configuration, which can make git run programs")
		case "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--bare", "--attr-source":
			c.unprovable("git " + f.Name + " points git at another repository, whose configuration can run programs")
		case "--exec-path", "--list-cmds":
			if f.HasValue {
				c.unprovable("git " + f.Name + " makes git run programs from another place")
			}
		case "--help", "--paginate":
			// --help runs man or a browser; -p a pager.
			c.notProven = true
		}
	}
	if len(g.p.Unknown) > 0 && g.sub == "" {
		c.unprovable("git with an option kz does not know: " + strings.Join(g.p.Unknown, " "))
	}
	if !g.p.Model && g.sub == "" && g.p.SubIndex < 0 && len(g.p.Operands) > 0 {
		c.unprovable("git with a non-literal sub-command")
	}
	c.info.destructive, c.info.destructiveSet = destructiveGit(g), true
	if c.info.destructive != "" {
		c.info.writes = true
		c.notProven = true
	}
	// The sub-command's own flags, with their effects.
	c.p = Parsed{Model: g.p.Model, Unknown: g.p.Unknown, SubIndex: -1}
	for _, f := range g.p.Flags {
		if !f.Global {
			f.Index -= g.off
			c.p.Flags = append(c.p.Flags, f)
		}
	}
	c.p.Operands = append(c.p.Operands, g.operands()...)
	for _, i := range g.p.MaybeOptions {
		if i >= g.off {
			c.p.MaybeOptions = append(c.p.MaybeOptions, i-g.off)
		}
	}
	if g.sub != "" {
		c.effects()
	}
	switch g.sub {
	case "":
		// `git` alone prints help; `git --version` the version.
	case "branch":
		if !gitBranchIsList(g) {
			c.info.writes, c.notProven = true, true
		}
	case "tag":
		if len(g.operands()) > 0 && !g.has("--list") || g.has("--annotate") || g.has("--sign") || g.has("--delete") ||
			g.has("--force") || g.has("--message") || g.has("--file") || g.has("--local-user") || g.has("--edit") {
			c.info.writes, c.notProven = true, true
		}
	case "remote":
		if a := g.action(); a != "" && a != "show" && a != "get-url" {
			c.info.writes, c.notProven = true, true
		}
	case "stash":
		switch g.action() {
		case "list", "show":
		default:
			c.info.writes, c.notProven = true, true
		}
	case "reflog":
		switch g.action() {
		case "", "show", "exists":
		default:
			c.info.writes, c.notProven = true, true
		}
	case "worktree":
		if g.action() != "list" {
			c.info.writes, c.notProven = true, true
		}
		if g.action() == "add" {
			// The new worktree's directory is created: it must stay in
			// the workspace.
			if ops := g.operands(); len(ops) > 1 {
				c.write(ops[1], OpWrite)
			}
		}
	case "config":
		gitConfig(c, g)
	case "clone":
		gitClone(c, g)
	case "apply":
		c.info.writes, c.notProven = true, true
		for _, f := range c.p.Flags {
			if f.Name == "--directory" {
				c.target(f.Value, f.ValueDynamic, OpWrite)
			}
		}
	default:
		if !gitReadOnly()[g.sub] {
			c.info.writes, c.notProven = true, true
			break
		}
		gitPaths(c, g)
	}
	if g.sub != "" && !g.p.Model {
		// A sub-command kz has no model of (or an alias).
		c.notProven = true
	}
	return c.finish()
}

// gitPaths records the paths a read-only sub-command names: operands
// (a pattern first for grep), pathspecs after --, and the path of
// REV:path.
func gitPaths(c *classCtx, g gitInvocation) {
	ops := g.operands()
	if g.sub == "grep" && !g.has("-e") && !g.has("-f") && len(ops) > 0 {
		ops = ops[1:]
	}
	content := gitContent[g.sub] || g.has("--no-index")
	if !content && (g.sub == "log" || g.sub == "whatchanged" || g.sub == "rev-list") {
		for _, f := range gitPatch {
			content = content || g.has(f)
		}
	}
	for _, i := range ops {
		a := g.args[i]
		if rev, p, ok := strings.Cut(a, ":"); ok && !g.dyn[i] && !strings.HasPrefix(p, "/") {
			// REV:path and :stage:path name a file in the history.
			if rev == "" {
				if _, after, ok := strings.Cut(p, ":"); ok && len(p) > 0 && p[0] >= '0' && p[0] <= '3' {
					p = after
				}
			}
			if p != "" {
				c.target(p, false, OpRead)
			}
			continue
		}
		t := c.target(a, g.dyn[i], OpRead)
		t.Meta = !content
	}
}

// gitBranchIsList reports a `git branch` that only lists.
func gitBranchIsList(g gitInvocation) bool {
	for _, f := range []string{"--delete", "-D", "--move", "-M", "--copy", "-C", "--force", "--track", "--no-track",
		"--set-upstream-to", "--unset-upstream", "--edit-description", "--create-reflog", "--recurse-submodules"} {
		if g.has(f) {
			return false
		}
	}
	if len(g.operands()) == 0 {
		return true
	}
	// Operands are patterns only in list mode.
	for _, f := range []string{"--list", "--all", "--remotes", "--contains", "--no-contains", "--merged",
		"--no-merged", "--points-at", "--verbose", "--show-current"} {
		if g.has(f) {
			return true
		}
	}
	return false
}

// gitConfig classifies git config: reading a key is read-only (listing
// every key may show tokens); writing changes a config file.
func gitConfig(c *classCtx, g gitInvocation) {
	ops := g.operands()
	action := g.action()
	reading := g.has("--get") || g.has("--get-all") || g.has("--get-regexp") || g.has("--get-urlmatch") ||
		g.has("--list") || g.has("--get-color") || g.has("--get-colorbool") ||
		action == "get" || action == "list"
	listing := g.has("--list") || g.has("--get-regexp") || action == "list"
	keys := ops
	if action == "get" || action == "list" {
		keys = ops[1:]
	}
	if reading {
		if listing {
			c.info.secrets = append(c.info.secrets, "git config lists every setting, credentials in URLs and headers included")
		}
		for _, k := range keys {
			if SecretName(g.args[k]) || strings.Contains(strings.ToLower(g.args[k]), "extraheader") {
				c.info.secrets = append(c.info.secrets, "git config reads "+g.args[k])
			}
		}
		return
	}
	c.info.writes, c.notProven = true, true
	c.info.targets = append(c.info.targets, gitConfigTargets(g)...)
}

// gitConfigTargets returns the file a writing `git config` changes. A key
// that can make git run programs (core.hooksPath, core.pager, alias.*,
// core.fsmonitor, ...) written to the repository's config is a write to
// .git/config, which the gate protects like any other write there; the
// global, system and --file forms write the file they name.
func gitConfigTargets(g gitInvocation) []Target {
	var out []Target
	local := true
	for _, f := range g.p.Flags {
		switch f.Name {
		case "--global":
			out, local = append(out, Target{Path: "~/.gitconfig", Op: OpWrite}), false
		case "--system":
			out, local = append(out, Target{Path: "/etc/gitconfig", Op: OpWrite}), false
		case "--file":
			out, local = append(out, Target{Path: f.Value, Op: OpWrite, Dynamic: f.ValueDynamic}), false
		case "--worktree":
			out, local = append(out, Target{Path: ".git/config.worktree", Op: OpWrite}), false
		}
	}
	if !local {
		return out
	}
	ops := g.operands()
	key := ""
	if len(ops) > 0 {
		key = g.args[ops[0]]
		switch key {
		case "set", "unset", "rename-section", "remove-section", "edit":
			key = ""
			if len(ops) > 1 && g.args[ops[0]] != "edit" {
				key = g.args[ops[1]]
			}
		}
	}
	if key == "" || !gitConfigSafe(key) {
		out = append(out, Target{Path: ".git/config", Op: OpWrite})
	}
	return out
}

// safeGitConfigPrefixes are settings that only change presentation.
var safeGitConfigPrefixes = []string{"color.", "advice.", "core.quotepath", "user.name", "user.email", "log.", "init.defaultbranch", "column.", "format.pretty", "i18n.", "diff.noprefix", "diff.renames", "status.short"}

func gitConfigSafe(kv string) bool {
	k, _, _ := strings.Cut(strings.ToLower(kv), "=")
	for _, p := range safeGitConfigPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// gitClone records what git clone writes: the target directory, or one
// named after the repository.
func gitClone(c *classCtx, g gitInvocation) {
	c.info.writes, c.notProven = true, true
	ops := g.operands()
	switch {
	case len(ops) >= 2:
		c.write(ops[1], OpWrite)
	case len(ops) == 1 && !g.dyn[ops[0]]:
		name := strings.TrimSuffix(path.Base(strings.TrimSuffix(g.args[ops[0]], "/")), ".git")
		c.target(name, false, OpWrite)
	case len(ops) == 1:
		c.target(g.args[ops[0]], true, OpWrite)
	}
	for _, f := range c.p.Flags {
		if f.Effect == EffectConfig {
			c.unprovable("git clone " + f.Name + " installs configuration or hooks that can run programs")
		}
	}
}

// DestructiveGit reports why a git argument list (after the program name)
// destroys work that cannot be recovered: reset --hard, clean -f, forced or
// deleting pushes, branch -D, checkout -f, reflog expire. Options are
// matched in every spelling the sub-command's parser takes. It returns ""
// for anything else.
func DestructiveGit(args []string, dyn []bool) string {
	return destructiveGit(parseGit(args, dyn))
}

func destructiveGit(g gitInvocation) string {
	switch g.sub {
	case "reset":
		if g.has("--hard") || g.has("--merge") || g.has("--keep") {
			return "git reset --hard discards uncommitted work"
		}
	case "clean":
		if g.has("--force") {
			return "git clean -f deletes untracked files"
		}
	case "push":
		if g.has("--force") || g.has("--force-with-lease") || g.has("--mirror") || g.has("--delete") || g.has("--prune") {
			return "git push --force rewrites or deletes remote history"
		}
		for _, i := range g.operands() {
			if a := g.args[i]; strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":") || strings.Contains(a, ":+") {
				return "git push with a forced or deleting refspec"
			}
		}
	case "branch":
		if g.has("-D") || g.has("--delete") && g.has("--force") || g.has("-M") || g.has("-C") {
			return "git branch -D deletes an unmerged branch"
		}
	case "checkout", "switch", "restore":
		if g.sub != "restore" && (g.has("--force") || g.has("--discard-changes")) {
			return "git " + g.sub + " --force discards local changes"
		}
		if g.sub != "switch" {
			for _, i := range g.operands() {
				if a := g.args[i]; a == "." || a == ":/" || a == "*" || a == ":(top)" || g.dyn[i] {
					return "git " + g.sub + " " + a + " discards every uncommitted change"
				}
			}
		}
	case "reflog":
		if a := g.action(); a == "expire" || a == "delete" {
			return "git reflog " + a + " drops recovery points"
		}
	case "stash":
		if a := g.action(); a == "clear" || a == "drop" {
			return "git stash " + a + " deletes stashed work"
		}
	case "update-ref":
		if g.has("-d") {
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
	for _, f := range ParseArgs("git", c.Args, c.Dynamic).Flags {
		if f.Global && f.Name == "-C" {
			dirs = append(dirs, f.Value)
		}
	}
	return dirs
}

// Destructive reports why a command destroys unrecoverable work, for
// commands the gate refuses in every mode (destructive git forms). Paths
// (catastrophic rm) are judged by the caller, which knows the workspace.
func Destructive(c Command) string {
	if c.destructiveSet {
		return c.destructive
	}
	if path.Base(c.Name) == "git" {
		return DestructiveGit(c.Args, c.Dynamic)
	}
	return ""
}
