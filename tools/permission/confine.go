package permission

import (
	"path"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/shell"
)

// Enforcement says how much of a confinement profile the machine's OS
// sandbox enforces (the lead wires it from tools/sandbox.Probe()).
type Enforcement string

// Enforcement levels. The zero value means none: a gate that was not told
// about a sandbox must not count on one.
const (
	// EnforcementFull: every property of the profiles holds (bubblewrap:
	// read-only mounts, hidden paths, own network and PID namespaces).
	EnforcementFull Enforcement = "full"
	// EnforcementPartial: writes are confined, but network, /proc and
	// hidden paths are not (Landlock alone).
	EnforcementPartial Enforcement = "partial"
	// EnforcementNone: nothing confines a command.
	EnforcementNone Enforcement = "none"
)

// orNone names the zero value.
func (e Enforcement) orNone() Enforcement {
	if e == "" {
		return EnforcementNone
	}
	return e
}

// why says, for a reason, what a proof of read-only cannot rely on.
func (e Enforcement) why() string {
	if e == EnforcementPartial {
		return "the OS sandbox is partial (enforcement partial: writes are confined, the network, other processes and hidden files are not)"
	}
	return "no OS sandbox is active (enforcement " + string(e.orNone()) + ")"
}

// full reports whether a proof of read-only can rely on the sandbox: only
// then may a wrong proof be harmless.
func (e Enforcement) full() bool { return e == EnforcementFull }

// vouchedPrograms are the programs that run without asking when no full
// sandbox backs the analysis: small, well-known read-only tools whose every
// option the shell analysis models, so that a proof about them needs no
// kernel to make it true. Anything else that the analysis proves
// read-only is asked on such machines. The map is built on first use, so
// that every kz process does not pay for it at start.
var vouchedPrograms = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"ls": true, "pwd": true, "cd": true, "cat": true, "head": true, "tail": true, "wc": true, "echo": true,
		"printf": true, "grep": true, "egrep": true, "fgrep": true, "sort": true, "uniq": true, "cut": true,
		"tr": true, "basename": true, "dirname": true, "realpath": true, "true": true, "false": true, "test": true,
		"[": true, "nl": true, "tac": true, "rev": true, "seq": true, "paste": true, "comm": true, "cmp": true,
		"stat": true, "du": true, "which": true, "type": true, "md5sum": true, "sha1sum": true, "sha256sum": true,
		"sha512sum": true, "uname": true, "whoami": true,
	}
})

// unvouched returns the first sub-command that may not run without asking
// on a machine without full enforcement, and false; or "", true when the
// sandbox is full or every sub-command is vouched for.
func (e *eval) unvouched() (string, bool) {
	if e.g.opts.Enforcement.full() {
		return "", true
	}
	for _, c := range e.an.Commands {
		if !vouched(c) {
			return c.String(), false
		}
	}
	return "", true
}

// vouched reports whether c is on the short list, spelled as a bare name,
// with no wrapper, no variable in front, and only options its model knows.
func vouched(c shell.Command) bool {
	if !vouchedPrograms()[c.Name] || c.Privileged || c.DynamicName || len(c.Wrappers) > 0 || len(c.Env) > 0 {
		return false
	}
	for i, a := range c.Args {
		if c.IsDynamic(i) && strings.ContainsAny(a, "$`") {
			return false
		}
	}
	return optionsKnown(c)
}

// optionsKnown reports whether the program's model parsed every argument
// of c, knew every option, found no word that may expand to an option,
// and no option does more than shape the output or read a file named in
// it (no writes, no programs, no configuration, no list of files).
func optionsKnown(c shell.Command) bool {
	p := shell.ParseArgs(c.Name, c.Args, dynFlags(c))
	if !p.Known() || len(p.MaybeOptions) > 0 {
		return false
	}
	for _, f := range p.Flags {
		if f.Effect != shell.EffectNone && f.Effect != shell.EffectRead {
			return false
		}
	}
	return true
}

// gitWriteSubs are git sub-commands that write the repository's .git
// directory (objects, refs, index, worktrees): under a workspace-write
// profile they need .git writable (but never its config or hooks). The map
// is built on first use, so that every kz process does not pay for it at
// start.
var gitWriteSubs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"commit": true, "add": true, "rm": true, "mv": true, "checkout": true, "switch": true, "restore": true,
		"reset": true, "stash": true, "merge": true, "rebase": true, "cherry-pick": true, "revert": true,
		"tag": true, "branch": true, "fetch": true, "pull": true, "push": true, "am": true, "init": true,
		"clone": true, "worktree": true, "notes": true, "apply": true, "update-index": true, "update-ref": true,
		"symbolic-ref": true, "read-tree": true, "write-tree": true, "commit-tree": true, "hash-object": true,
		"checkout-index": true, "gc": true, "prune": true, "repack": true, "pack-refs": true, "maintenance": true,
		"submodule": true, "sparse-checkout": true, "bisect": true, "replace": true, "mktag": true, "mktree": true,
		"fast-import": true, "lfs": true, "stage": true, "remote": true, "reflog": true, "mergetool": true,
	}
})

// gitWrites reports whether the command line runs a git sub-command that
// writes the repository.
func (e *eval) gitWrites() bool {
	if e.an == nil {
		return false
	}
	for i, c := range e.an.Commands {
		if path.Base(c.Name) != "git" || c.ReadOnly {
			continue
		}
		sub := e.parsedCommand(i).Sub
		if sub == "apply" && !anyArg(c.Args, "--index", "--cached", "--3way", "-3") {
			// Plain git apply changes the work tree only.
			continue
		}
		if gitWriteSubs()[sub] {
			return true
		}
	}
	return false
}

func anyArg(args []string, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if a == o {
				return true
			}
		}
	}
	return false
}

// confinement decides the OS sandbox profile a shell command runs under
// with decision d (on an ask, what the person's yes gives):
//   - analysis-only mode, and the model's own shell in patch-proposal
//     mode: read-only, whatever allowed it;
//   - a command the analysis proved read-only, allowed (or asked) without
//     a rule, grant or permission mode lifting the question: read-only,
//     no network; the proof needs nothing more, and the kernel makes it
//     true;
//   - anything a rule, a grant, yolo, accept-edits or the person's yes
//     lets run, and a proposal's VERIFY command: workspace-write, with the
//     network the configuration allows, and .git writable (but its config
//     and hooks) when a git sub-command writes the repository.
//
// A denied command gets the strictest profile: it never runs, and a
// runner that ran it anyway would confine it most.
func (e *eval) confinement(d engine.Decision) engine.Confinement {
	if e.kind != KindBash {
		return engine.Confinement{}
	}
	ro := engine.Confinement{Profile: engine.ProfileReadOnly}
	switch {
	case d == engine.DecisionDeny,
		e.q.Mode == engine.ModeAnalysisOnly,
		e.q.Mode == engine.ModePatchProposal && !e.q.Request.Internal,
		d == engine.DecisionAllow && e.readOnlyAllow,
		d == engine.DecisionAsk && e.an.ReadOnly():
		return ro
	}
	return engine.Confinement{Profile: engine.ProfileWorkspaceWrite, Network: e.g.opts.Network, Git: e.gitWrites()}
}
