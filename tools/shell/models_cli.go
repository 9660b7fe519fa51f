package shell

import (
	"strings"
	"sync"
)

// Models of the programs with sub-commands: the global options before the
// sub-command, so that Sub is the sub-command the program runs (`git -C x
// push` runs push, `npm --prefix . publish` runs publish), and the bash
// builtins the analysis classifies. Sources: git(1) and git.c's
// handle_options (git 2.39), npm's config definitions (npm 10), `go help`,
// cargo(1), docker(1) and kubectl's global flags, bash(1) SHELL BUILTIN
// COMMANDS.

// gitSubcommands lists git's commands. A sub-command with a model maps to
// it (models_git.go); the others map to nil.
var gitSubcommands = []string{
	"add", "am", "annotate", "apply", "archimport", "archive", "bisect", "blame", "branch", "bugreport", "bundle",
	"cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index",
	"cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit", "commit-graph", "commit-tree",
	"config", "count-objects", "credential", "credential-cache", "credential-store", "cvsexportcommit",
	"cvsimport", "cvsserver", "daemon", "describe", "diagnose", "diff", "diff-files", "diff-index", "diff-tree",
	"difftool", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch", "fmt-merge-msg",
	"for-each-ref", "for-each-repo", "format-patch", "fsck", "fsmonitor--daemon", "gc", "get-tar-commit-id",
	"gitk", "gitweb", "grep", "gui", "hash-object", "help", "hook", "http-backend", "imap-send", "index-pack",
	"init", "instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree", "mailinfo",
	"mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index", "merge-one-file",
	"merge-tree", "mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "p4",
	"pack-objects", "pack-redundant", "pack-refs", "patch-id", "prune", "prune-packed", "pull", "push",
	"quiltimport", "range-diff", "read-tree", "rebase", "receive-pack", "reflog", "remote", "repack",
	"replace", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
	"scalar", "send-email", "send-pack", "shortlog", "show", "show-branch", "show-index", "show-ref",
	"sparse-checkout", "stage", "stash", "status", "stripspace", "submodule", "svn", "switch",
	"symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index", "update-ref",
	"update-server-info", "upload-archive", "upload-pack", "var", "verify-commit", "verify-pack",
	"verify-tag", "version", "whatchanged", "worktree", "write-tree",
}

func initCLIModels() {
	git := &Model{name: "git", custom: parseGitArgs, subs: map[string]*Model{}}
	for _, s := range gitSubcommands {
		git.subs[s] = nil
	}
	register(git)

	// npm parses with nopt: long options anywhere, `--key value` only
	// for keys that take a value (an unknown key is a boolean), short
	// aliases. The first word that is not an option is the command.
	npm := newModel("npm", true, npmOptions...)
	npm.exactLong = true
	npm.subs = anySub
	register(npm)
	for _, name := range []string{"yarn", "pnpm", "npx", "bun", "deno"} {
		m := newModel(name, true, "C,cwd,dir=:c", "prefix=:c", "filter,F=", "w,workspace=", "r,recursive",
			"g,global", "silent", "s", "verbose", "json", "offline", "frozen-lockfile", "registry=",
			"reporter=", "loglevel=", "config=:C", "package,p=", "c,call=:x", "y,yes", "no", "h,help", "v,version")
		m.exactLong = true
		m.subs = anySub
		register(m)
	}

	// go: only -C before the command (Go's flag package: one dash or
	// two, `-C dir` or `-C=dir`, no grouping, no abbreviation).
	register(&Model{name: "go", custom: parseGo})

	cargo := newModel("cargo", false, "V,version", "list", "explain=", "v,verbose", "q,quiet", "color=",
		"C=:c", "locked", "offline", "frozen", "config=:C", "Z=", "h,help")
	cargo.exactLong, cargo.subs = true, anySub
	register(cargo)

	docker := newModel("docker", false, "config=:C", "c,context=", "D,debug", "H,host=", "l,log-level=",
		"tls", "tlscacert=", "tlscert=", "tlskey=", "tlsverify", "v,version", "h,help")
	docker.exactLong, docker.subs = true, anySub
	register(docker, "podman")

	kubectl := newModel("kubectl", true, "as=", "as-group=", "as-uid=", "cache-dir=", "certificate-authority=",
		"client-certificate=", "client-key=", "cluster=", "context=", "disable-compression",
		"insecure-skip-tls-verify", "kubeconfig=:C", "log-flush-frequency=", "match-server-version",
		"n,namespace=", "password=", "profile=", "profile-output=", "request-timeout=", "s,server=",
		"tls-server-name=", "token=", "user=", "username=", "warnings-as-errors", "v=", "vmodule=", "h,help")
	kubectl.exactLong, kubectl.subs = true, anySub
	register(kubectl)

	// make runs the makefile's recipes: it is never read-only; the
	// model finds the directory and makefile it uses.
	register(gnu("make", "b", "m", "B,always-make", "C,directory=:c", "d", "debug?", "e,environment-overrides",
		"E,eval=:x", "f,file,makefile=:C", "i,ignore-errors", "I,include-dir=:C", "j,jobs?", "jobserver-style=",
		"k,keep-going", "l,load-average,max-load?", "L,check-symlink-times", "n,just-print,dry-run,recon",
		"o,old-file,assume-old=", "O,output-sync?", "p,print-data-base", "q,question", "r,no-builtin-rules",
		"R,no-builtin-variables", "shuffle?", "s,silent,quiet", "no-silent", "S,no-keep-going,stop", "t,touch",
		"trace", "v", "print-directory,w", "no-print-directory", "W,what-if,new-file,assume-new=",
		"warn-undefined-variables"), "gmake")

	// Bash builtins: no long options, no abbreviations.
	builtin := func(name string, specs ...string) *Model {
		m := newModel(name, false, specs...)
		m.exactLong = true
		return register(m)
	}
	builtin("cd", "L", "P", "e", "@")
	builtin("pwd", "L", "P")
	builtin("type", "a", "f", "p", "t", "P")
	builtin("command", "p", "v", "V")
	builtin("exec", "c", "l", "a=")
	builtin("wait", "f", "n", "p=")
	builtin("jobs", "l", "n", "p", "r", "s", "x")
	builtin("read", "a=", "d=", "e", "E", "i=", "n=", "N=", "p=", "r", "s", "t=", "u=")
	builtin("mapfile", "d=", "n=", "O=", "s=", "t", "u=", "C=:x", "c=")
	builtin("readarray", "d=", "n=", "O=", "s=", "t", "u=", "C=:x", "c=")
	builtin("printf", "v=")
	builtin("unset", "f", "v", "n")
	builtin("getopts")
	builtin("umask", "p", "S")
	builtin("hash", "r", "p=:x", "d", "t", "l")
	builtin("shift")
	builtin("times")
	builtin("help", "d", "m", "s")
	for _, name := range []string{"true", "false", ":", "test", "[", "echo", "pushd", "popd", "dirs"} {
		register(&Model{name: name, custom: parseBuiltinOperands(name)})
	}
}

// anySub marks a model whose first operand is a sub-command, none of which
// is modelled: Sub is found, what follows it is not parsed.
var anySub = map[string]*Model{}

// npmOptions are npm's configuration keys that take a value, its
// booleans in common use, and its short aliases (npm 10 config
// definitions). An unknown key makes Sub uncertain; it is reported.
var npmOptions = []string{
	"C,prefix=:c", "w,workspace=", "ws,workspaces", "include-workspace-root", "g,global", "location=",
	"registry=", "cache=", "userconfig=:C", "globalconfig=:C", "loglevel=", "s,silent", "q,quiet", "d",
	"dd,ddd", "verbose", "tag=", "otp=", "scope=", "access=", "auth-type=", "before=", "cafile=", "cert=",
	"key=", "ca=", "editor=:x", "script-shell=:x", "node-options=:x", "shell=:x", "browser=:x",
	"init-module=:x", "omit=", "include=", "install-strategy=", "fetch-retries=", "fetch-timeout=",
	"https-proxy=", "proxy=", "noproxy=", "local-address=", "maxsockets=", "heading=", "color=", "json",
	"parseable,p", "l,long", "a,all", "y,yes", "no", "f,force", "D,save-dev", "P,save-prod", "O,save-optional",
	"E,save-exact", "B,save-bundle", "S,save", "no-save", "dry-run", "ignore-scripts", "foreground-scripts",
	"offline", "prefer-offline", "prefer-online", "legacy-peer-deps", "strict-peer-deps", "audit", "fund",
	"package-lock", "package-lock-only", "production", "depth=", "c,call=:x", "package=", "h,help",
	"v,version", "usage", "workspaces-update", "provenance", "provenance-file=", "pack-destination=",
	"lockfile-version=", "sbom-format=", "sbom-type=", "expect-results", "expect-result-count=", "userconfig",
}

// parseBuiltinOperands returns a parser for builtins whose words are all
// operands as far as options go: test and [ (an expression), echo (whose
// -n/-e/-E come first and are reported as flags), true, false, :, and the
// directory stack builtins (`+N`/`-N` are stack positions).
func parseBuiltinOperands(name string) func([]string, []bool) Parsed {
	return func(args []string, dyn []bool) Parsed {
		p := Parsed{Model: true, SubIndex: -1}
		i := 0
		switch name {
		case "echo":
			for ; i < len(args) && !dyn[i] && len(args[i]) > 1 && args[i][0] == '-' &&
				strings.Trim(args[i][1:], "neE") == ""; i++ {
				for _, c := range args[i][1:] {
					p.Flags = append(p.Flags, Flag{Name: "-" + string(c), Index: i})
				}
			}
		case "pushd", "popd", "dirs":
			for ; i < len(args) && !dyn[i] && len(args[i]) > 1 && args[i][0] == '-' && !isNumber(args[i][1:]); i++ {
				if args[i] == "--" {
					i++
					break
				}
				for _, c := range args[i][1:] {
					if !strings.ContainsRune("nclpv", c) {
						p.Unknown = append(p.Unknown, args[i])
						break
					}
					p.Flags = append(p.Flags, Flag{Name: "-" + string(c), Index: i})
				}
			}
		}
		for ; i < len(args); i++ {
			p.Operands = append(p.Operands, i)
		}
		return p
	}
}

// git's global options: those taking a value, and the others. The maps
// are built on first use, so that every kz process does not pay for them
// at start.
var (
	gitValued = sync.OnceValue(func() map[string]Effect {
		return map[string]Effect{"-C": EffectChdir, "-c": EffectConfig, "--git-dir": EffectConfig,
			"--work-tree": EffectConfig, "--namespace": EffectConfig, "--super-prefix": EffectConfig,
			"--config-env": EffectConfig, "--attr-source": EffectConfig}
	})
	gitBare = sync.OnceValue(func() map[string]Effect {
		return map[string]Effect{"-p": "", "--paginate": "", "-P": "", "--no-pager": "", "--no-replace-objects": "",
			"--no-lazy-fetch": "", "--no-optional-locks": "", "--no-advice": "", "--bare": EffectConfig,
			"--literal-pathspecs": "", "--glob-pathspecs": "", "--noglob-pathspecs": "", "--icase-pathspecs": "",
			"--html-path": "", "--man-path": "", "--info-path": "", "-v": "", "--version": "", "-h": "", "--help": "",
			"--exec-path": EffectExec}
	})
)

// parseGitArgs follows git.c's handle_options: exact global options only
// (no grouping, no abbreviation), then the sub-command.
func parseGitArgs(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if dyn[i] {
			if dynamicPrefix(a) == "" || a[0] == '-' {
				// The sub-command or a global option is not a literal.
				p.Model = false
				p.Unknown = append(p.Unknown, a)
				for k := i; k < len(args); k++ {
					p.Operands = append(p.Operands, k)
				}
				return p
			}
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if e, ok := gitValued()[name]; ok {
			f := Flag{Name: name, Index: i, Effect: e, Global: true, HasValue: true, Value: val}
			if name == "-C" || name == "-c" {
				if hasVal {
					p.Unknown = append(p.Unknown, a)
					continue
				}
			}
			if !hasVal {
				if i+1 >= len(args) {
					p.Unknown = append(p.Unknown, a)
					continue
				}
				i++
				f.Value, f.ValueDynamic = args[i], dyn[i]
			}
			p.Flags = append(p.Flags, f)
			continue
		}
		if name == "--exec-path" || name == "--list-cmds" {
			p.Flags = append(p.Flags, Flag{Name: name, Index: i, Effect: EffectExec, Global: true, HasValue: hasVal, Value: val})
			continue
		}
		if e, ok := gitBare()[a]; ok {
			p.Flags = append(p.Flags, Flag{Name: gitCanon(a), Index: i, Effect: e, Global: true})
			continue
		}
		p.Unknown = append(p.Unknown, a)
	}
	if i >= len(args) {
		return p
	}
	m := modelTable()["git"]
	m.sub(&p, args[i:], dyn[i:], i, 0, func() {})
	return p
}

func gitCanon(a string) string {
	switch a {
	case "-p":
		return "--paginate"
	case "-P":
		return "--no-pager"
	case "-v":
		return "--version"
	case "-h":
		return "--help"
	}
	return a
}

// parseGo: `go [-C dir] command [args]`.
func parseGo(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	i := 0
	if len(args) > 0 && !dyn[0] {
		a := strings.TrimPrefix(args[0], "-")
		if a == "-C" || a == "C" {
			if len(args) > 1 {
				p.Flags = append(p.Flags, Flag{Name: "-C", Index: 0, Effect: EffectChdir, Global: true, HasValue: true, Value: args[1], ValueDynamic: dyn[1]})
			}
			i = 2
		} else if v, ok := strings.CutPrefix(a, "C="); ok || strings.HasPrefix(a, "-C=") {
			if !ok {
				v = strings.TrimPrefix(a, "-C=")
			}
			p.Flags = append(p.Flags, Flag{Name: "-C", Index: 0, Effect: EffectChdir, Global: true, HasValue: true, Value: v})
			i = 1
		}
	}
	if i >= len(args) {
		return p
	}
	if dyn[i] || strings.HasPrefix(args[i], "-") {
		p.Model = false
		if strings.HasPrefix(args[i], "-") {
			p.Unknown = append(p.Unknown, args[i])
		}
		for k := i; k < len(args); k++ {
			p.Operands = append(p.Operands, k)
		}
		return p
	}
	p.Sub, p.SubIndex, p.Subs = args[i], i, []int{i}
	p.Model = false // the commands' own flags are not modelled
	for k := i + 1; k < len(args); k++ {
		p.Operands = append(p.Operands, k)
	}
	return p
}
