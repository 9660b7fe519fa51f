package shell

import (
	"slices"
	"strings"
	"sync"
)

// This file's init runs after models_cli.go's (files initialise in name
// order), which registers the git model.

// git's sub-command models come from git's own option lists
// (models_git_gen.go); here they get their effects, git's negated
// spellings (`--no-verify`), and the parser each sub-command uses: the
// parse-options commands take unambiguous abbreviations, the revision
// walkers (log, show, diff, rev-list) take only exact names.

// gitEffects are the options of git sub-commands that do more than shape
// the output, by canonical name ("" key: every sub-command). The map is
// built on first use, so that every kz process does not pay for it at
// start.
var gitEffects = sync.OnceValue(func() map[string]map[string]string {
	return map[string]map[string]string{
		"": {"--output": "w", "--ext-diff": "x", "--pathspec-from-file": "l", "--open-files-in-pager": "x",
			"--exec": "x", "--upload-pack": "x", "--receive-pack": "x", "--edit-description": "x", "--exclude-from": "r"},
		"grep":        {"-f": "r"},
		"log":         {"-O": "r"},
		"whatchanged": {"-O": "r"},
		"show":        {"-O": "r"},
		"diff":        {"-O": "r"},
		"diff-tree":   {"-O": "r"},
		"diff-files":  {"-O": "r"},
		"diff-index":  {"-O": "r"},
		"blame":       {"--contents": "r", "--ignore-revs-file": "r", "-S": "r"},
		"annotate":    {"--contents": "r", "--ignore-revs-file": "r", "-S": "r"},
		"ls-files":    {"-X": "r"},
		"cat-file":    {"--batch": "l", "--batch-check": "l", "--batch-command": "l", "--batch-all-objects": "l"},
		"rev-list":    {"--stdin": ""},
		"config":      {"--file": "r", "--blob": "", "--edit": "x"},
		"clone":       {"--template": "C", "--config": "C", "--separate-git-dir": "w"},
		"commit":      {"--file": "r", "--template": "r", "--pathspec-from-file": "l"},
		"tag":         {"--file": "r"},
		"notes":       {},
		"archive":     {"--output": "w", "--remote": "x"},
		"am":          {},
		"apply":       {"--directory": ""},
		"bisect":      {},
		"fetch":       {"--upload-pack": "x"},
		"pull":        {"--upload-pack": "x"},
		"submodule":   {},
	}
})

// gitRevisionWalkers parse with setup_revisions: exact option names.
var gitRevisionWalkers = map[string]bool{"log": true, "show": true, "diff": true, "diff-tree": true,
	"diff-files": true, "diff-index": true, "rev-list": true, "shortlog": true, "rev-parse": true,
	"whatchanged": true}

func initGitModels() { lazyGitSubs(models["git"]) }

// lazyGitSubs gives git the models of its sub-commands. Each is built
// when a command first uses it (Model.subModel): building all of them (the
// options of some 70 sub-commands, their negations and effects) took
// 3-5 ms, which every session paid in the background while its agent CLI
// was starting its turn.
func lazyGitSubs(git *Model) {
	git.lazySubs = map[string]func() *Model{}
	lazy := func(sub string, specs func() []string) {
		// A sub-command known only from its options is known all the
		// same.
		if _, ok := git.subs[sub]; !ok {
			git.subs[sub] = nil
		}
		git.lazySubs[sub] = sync.OnceValue(func() *Model { return gitSubModel(sub, specs()) })
	}
	for sub, specs := range gitOptionSpecs() {
		if len(specs) == 0 {
			continue
		}
		lazy(sub, func() []string { return specs })
	}
	// whatchanged is log; annotate is blame; show takes log's options
	// too.
	lazy("whatchanged", func() []string { return gitOptionSpecs()["log"] })
	lazy("annotate", func() []string { return gitOptionSpecs()["blame"] })
	lazy("show", func() []string {
		return append(append([]string(nil), gitOptionSpecs()["log"]...), gitOptionSpecs()["show"]...)
	})
	git.subs["version"] = nil
	git.lazySubs["version"] = sync.OnceValue(func() *Model { return newModel("version", true, "build-options") })
	// Sub-commands with sub-commands of their own: the first operand is
	// the action; their options are judged by classifyGit.
	lazy("stash", func() []string {
		return []string{"q,quiet", "p,patch", "k,keep-index", "no-keep-index",
			"u,include-untracked", "a,all", "only-untracked", "m,message=", "S,staged", "pathspec-from-file=",
			"pathspec-file-nul", "index"}
	})
	lazy("worktree", func() []string {
		return []string{"porcelain", "v,verbose", "expire=", "z", "f,force",
			"b=", "B=", "detach", "checkout", "no-checkout", "lock", "reason=", "orphan", "track", "no-track",
			"guess-remote", "no-guess-remote", "q,quiet", "n,dry-run"}
	})
	lazy("reflog", func() []string {
		return append([]string{"expire=", "expire-unreachable=", "rewrite",
			"updateref", "stale-fix", "dry-run", "verbose", "single-worktree"}, gitOptionSpecs()["log"]...)
	})
	lazy("remote", func() []string {
		return []string{"v,verbose", "n", "push", "all", "f", "t=", "m=",
			"tags", "no-tags", "mirror?", "add", "delete", "dry-run"}
	})
}

func gitSubModel(sub string, specs []string) *Model {
	// "NUM" stands for -<number> in the extracted lists.
	numeric := false
	specs = slices.DeleteFunc(slices.Clone(specs), func(s string) bool {
		numeric = numeric || s == "NUM"
		return s == "NUM"
	})
	m := newModel(sub, true, specs...)
	m.exactLong = gitRevisionWalkers[sub]
	// Negated spellings of long options (`--no-verify`); a negation
	// takes no value.
	for _, n := range append([]string(nil), m.longNames...) {
		if strings.HasPrefix(n, "no-") {
			continue
		}
		if _, ok := m.long["no-"+n]; !ok {
			m.add("no-" + n)
		}
	}
	if _, ok := m.long["max-count"]; ok && numeric {
		m.numeric = "--max-count"
	}
	if sub == "grep" {
		m.numeric = "--context"
	}
	effects := gitEffects()
	for _, table := range []map[string]string{effects[""], effects[sub]} {
		for name, letter := range table {
			var o *modelOpt
			if k, ok := strings.CutPrefix(name, "--"); ok {
				o = m.long[k]
			} else if len(name) == 2 {
				o = m.short[name[1]]
			}
			if o != nil {
				o.effect = effectLetters[letter]
			}
		}
	}
	return m
}
