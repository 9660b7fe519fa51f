package shell

import (
	"path"
	"strings"
)

// peelKind says what a wrapper does with the rest of its arguments.
type peelKind int

const (
	// peelNone: the program is not a wrapper.
	peelNone peelKind = iota
	// peelNext: rest is the wrapped command.
	peelNext
	// peelScript: the wrapper runs script as shell code.
	peelScript
	// peelOnly: the wrapper runs nothing else; self is the command.
	peelOnly
)

// peelResult is what peeling one wrapper found.
type peelResult struct {
	kind       peelKind
	label      string
	rest       []string
	restDyn    []bool
	self       []string
	selfDyn    []bool
	env        []string
	privileged bool
	unprovable string
	writes     []string
	// reads are files the wrapper reads (xargs -a).
	reads         []string
	chdir         string
	script        string
	scriptDynamic bool
}

// optSpec describes a wrapper's options: which take an argument.
type optSpec struct {
	short string          // short options taking an argument, e.g. "sk"
	long  map[string]bool // long options taking an argument (without --)
}

// scanOpts skips options starting at index i and returns the index of the
// first operand. onOpt sees every option with its argument, if any.
func scanOpts(words []string, dyn []bool, i int, spec optSpec, onOpt func(opt, arg string, argDyn bool)) int {
	for i < len(words) {
		w := words[i]
		if dyn[i] || w == "-" || !strings.HasPrefix(w, "-") {
			return i
		}
		if w == "--" {
			return i + 1
		}
		if strings.HasPrefix(w, "--") {
			name, val, hasVal := strings.Cut(w[2:], "=")
			if !hasVal && spec.long[name] && i+1 < len(words) {
				i++
				onOpt("--"+name, words[i], dyn[i])
			} else {
				onOpt("--"+name, val, false)
			}
			i++
			continue
		}
		// A cluster of short options; one taking an argument ends it.
		consumed := false
		for j := 1; j < len(w); j++ {
			c := w[j]
			if strings.IndexByte(spec.short, c) >= 0 {
				arg, argDyn := w[j+1:], false
				if arg == "" && i+1 < len(words) {
					i++
					arg, argDyn = words[i], dyn[i]
				}
				onOpt("-"+string(c), arg, argDyn)
				consumed = true
				break
			}
			onOpt("-"+string(c), "", false)
		}
		_ = consumed
		i++
	}
	return i
}

func next(label string, words []string, dyn []bool, i int) peelResult {
	if i >= len(words) {
		return peelResult{kind: peelOnly, label: label, self: words, selfDyn: dyn}
	}
	return peelResult{kind: peelNext, label: label, rest: words[i:], restDyn: dyn[i:]}
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "mksh": true, "yash": true, "fish": true, "rbash": true}

func isShell(base string) bool { return shells[base] }

// peel recognises a wrapper at words[0] and returns what it wraps.
func peel(words []string, dyn []bool) peelResult {
	name := path.Base(words[0])
	switch name {
	case "timeout":
		// timeout [options] DURATION COMMAND...
		return peelModelled(name, words, dyn, 1)
	case "nice", "stdbuf", "setsid", "nohup":
		return peelModelled(name, words, dyn, 0)
	case "builtin", "unbuffer", "catchsegv", "nocorrect", "noglob", "caffeinate", "rlwrap", "busybox":
		return next(name, words, dyn, 1)
	case "time":
		r := peelResult{}
		i := scanOpts(words, dyn, 1, optSpec{short: "fo", long: map[string]bool{"format": true, "output": true}}, func(o, a string, _ bool) {
			if o == "-o" || o == "--output" {
				r.writes = append(r.writes, a)
			}
		})
		n := next(name, words, dyn, i)
		n.writes = r.writes
		return n
	case "command":
		lookup := false
		i := scanOpts(words, dyn, 1, optSpec{}, func(o, _ string, _ bool) {
			if o == "-v" || o == "-V" {
				lookup = true
			}
		})
		if lookup {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
		}
		return next(name, words, dyn, i)
	case "exec":
		i := scanOpts(words, dyn, 1, optSpec{short: "a"}, func(string, string, bool) {})
		return next(name, words, dyn, i)
	case "env":
		return peelEnv(words, dyn)
	case "xargs":
		return peelXargs(words, dyn)
	case "sudo", "doas", "pkexec", "run0":
		return peelSudo(name, words, dyn)
	case "su", "runuser":
		return peelSu(name, words, dyn)
	case "flock":
		return peelFlock(words, dyn)
	case "script":
		return peelScriptCmd(words, dyn)
	case "ionice", "chrt", "taskset":
		p, why := wrapperArgs(name, words, dyn)
		if p.Has("--pid") || p.Has("--pgid") || p.Has("--uid") || p.Has("--max") {
			// They act on running processes: the command is itself.
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn, unprovable: why}
		}
		skip := 0
		if name != "ionice" {
			skip = 1 // the priority or the mask
		}
		return peelOperands(name, words, dyn, p, skip, why)
	case "watch":
		p, why := wrapperArgs(name, words, dyn)
		if len(p.Operands) == 0 {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn, unprovable: why}
		}
		if p.Has("--exec") {
			return peelOperands(name, words, dyn, p, 0, why)
		}
		r := joinedScript(name, words, dyn, p.Operands[0]+1)
		r.unprovable = why
		return r
	case "eval":
		return joinedScript(name, words, dyn, 1)
	case "trap":
		// trap CODE SIGNAL...: CODE runs later, in this shell.
		i := scanOpts(words, dyn, 1, optSpec{}, func(string, string, bool) {})
		if i+1 >= len(words) || words[i] == "-" || words[i] == "" && !dyn[i] {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
		}
		return peelResult{kind: peelScript, label: name, script: words[i], scriptDynamic: dyn[i]}
	case "alias":
		// An alias body runs wherever its name is later used (with
		// expand_aliases): analyse the bodies as code.
		var bodies []string
		for k := 1; k < len(words); k++ {
			if dyn[k] {
				return peelResult{kind: peelScript, label: name, scriptDynamic: true}
			}
			if _, body, ok := strings.Cut(words[k], "="); ok {
				bodies = append(bodies, body)
			}
		}
		if len(bodies) == 0 {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
		}
		return peelResult{kind: peelScript, label: name, script: strings.Join(bodies, "\n")}
	case "chroot":
		i := scanOpts(words, dyn, 1, optSpec{long: map[string]bool{"userspec": true, "groups": true}}, func(string, string, bool) {})
		n := next(name, words, dyn, i+1)
		n.privileged = true
		return n
	case "strace", "ltrace":
		r := peelResult{}
		i := scanOpts(words, dyn, 1, optSpec{short: "eopsuEabIOSPXnADFlw"}, func(o, a string, _ bool) {
			if o == "-o" {
				r.writes = append(r.writes, a)
			}
			if o == "-p" {
				r.kind = peelOnly
			}
		})
		if r.kind == peelOnly {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
		}
		n := next(name, words, dyn, i)
		n.writes = r.writes
		return n
	}
	if shells[name] {
		return peelShell(name, words, dyn)
	}
	return peelResult{kind: peelNone}
}

// joinedScript handles wrappers that join their arguments with spaces and
// run the result as shell code (eval, watch).
func joinedScript(name string, words []string, dyn []bool, i int) peelResult {
	if i >= len(words) {
		return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
	}
	for _, d := range dyn[i:] {
		if d {
			return peelResult{kind: peelScript, label: name, scriptDynamic: true}
		}
	}
	return peelResult{kind: peelScript, label: name, script: strings.Join(words[i:], " ")}
}

// peelShell handles `bash -c SCRIPT`; without -c the shell runs a script
// file (an ordinary program run) or reads stdin (handled by the caller).
func peelShell(name string, words []string, dyn []bool) peelResult {
	hasC := false
	i := 1
	for i < len(words) {
		w := words[i]
		if dyn[i] {
			return peelResult{kind: peelScript, label: name + " -c", scriptDynamic: true}
		}
		if w == "--" || w == "-" {
			i++
			break
		}
		if (strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+")) && len(w) > 1 {
			if strings.HasPrefix(w, "--") {
				if w == "--rcfile" || w == "--init-file" {
					i++
				}
				i++
				continue
			}
			if strings.ContainsRune(w[1:], 'c') && w[0] == '-' {
				hasC = true
			}
			if strings.ContainsAny(w[1:], "oO") {
				i++ // -o option / -O shopt take an argument
			}
			i++
			continue
		}
		break
	}
	if !hasC {
		return peelResult{kind: peelNone}
	}
	if i >= len(words) {
		return peelResult{kind: peelScript, label: name + " -c", scriptDynamic: true}
	}
	return peelResult{kind: peelScript, label: name + " -c", script: words[i], scriptDynamic: dyn[i]}
}

// wrapperArgs parses a wrapper's options with its model. An option the
// model does not know may take the next word as its value, which would
// make the wrapped command another one: the peel is then unprovable.
func wrapperArgs(name string, words []string, dyn []bool) (Parsed, string) {
	p := ParseArgs(name, words[1:], dyn[1:])
	if len(p.Unknown) > 0 {
		return p, name + " with an option kz does not know: " + strings.Join(p.Unknown, " ")
	}
	return p, ""
}

// peelOperands returns the command that starts at the wrapper's operand
// number skip.
func peelOperands(name string, words []string, dyn []bool, p Parsed, skip int, why string) peelResult {
	if len(p.Operands) <= skip {
		return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn, unprovable: why}
	}
	n := next(name, words, dyn, p.Operands[skip]+1)
	n.unprovable = why
	return n
}

func peelModelled(name string, words []string, dyn []bool, skip int) peelResult {
	p, why := wrapperArgs(name, words, dyn)
	return peelOperands(name, words, dyn, p, skip, why)
}

// peelEnv handles env: options (-i, -u, -C dir, -S string, in every
// spelling), NAME=VALUE assignments, then the command; -S splits its
// string into the command line, which is analysed as a script.
func peelEnv(words []string, dyn []bool) peelResult {
	p, why := wrapperArgs("env", words, dyn)
	r := peelResult{label: "env", unprovable: why}
	split, splitSet, splitDyn := "", false, false
	for _, f := range p.Flags {
		switch f.Name {
		case "--chdir":
			r.chdir = f.Value
			if f.ValueDynamic {
				r.unprovable = "env -C with a directory that is not a literal"
			}
		case "--split-string":
			split, splitSet, splitDyn = split+" "+f.Value, true, splitDyn || f.ValueDynamic
		}
	}
	i := len(words)
	for _, k := range p.Operands {
		w := words[k+1]
		if dyn[k+1] {
			if r.unprovable == "" {
				r.unprovable = "env with a non-literal argument"
			}
			return peelResult{kind: peelScript, label: "env", scriptDynamic: true, unprovable: r.unprovable}
		}
		if name, _, ok := strings.Cut(w, "="); ok && name != "" {
			r.env = append(r.env, name)
			continue
		}
		i = k + 1
		break
	}
	if splitSet {
		rest := make([]string, 0, len(words)-i)
		for _, w := range words[i:] {
			rest = append(rest, quoteWord(w))
		}
		return peelResult{kind: peelScript, label: "env -S", env: r.env, chdir: r.chdir, unprovable: r.unprovable,
			script: strings.TrimSpace(split + " " + strings.Join(rest, " ")), scriptDynamic: splitDyn}
	}
	n := next("env", words, dyn, i)
	n.env, n.chdir, n.unprovable = r.env, r.chdir, r.unprovable
	if n.kind == peelOnly {
		n.env = nil
	}
	return n
}

// peelXargs handles xargs: the command after its options gets arguments
// read from stdin (or from the -a file), which may be anything, options
// included; with -I they replace the marker instead.
func peelXargs(words []string, dyn []bool) peelResult {
	p, why := wrapperArgs("xargs", words, dyn)
	replace := ""
	for _, f := range p.Flags {
		switch f.Name {
		case "-I", "--replace":
			replace = f.Value
			if replace == "" {
				replace = "{}"
			}
		}
	}
	var rest []string
	var restDyn []bool
	if len(p.Operands) > 0 {
		k := p.Operands[0] + 1
		rest = append(rest, words[k:]...)
		restDyn = append(restDyn, dyn[k:]...)
	}
	if len(rest) == 0 {
		rest, restDyn = []string{"echo"}, []bool{false}
	}
	if replace != "" {
		for k := range rest {
			if strings.Contains(rest[k], replace) {
				restDyn[k] = true
			}
		}
	} else {
		// Arguments read from the input are appended at the end.
		rest = append(rest, xargsInput)
		restDyn = append(restDyn, true)
	}
	r := peelResult{kind: peelNext, label: "xargs", rest: rest, restDyn: restDyn, unprovable: why}
	for _, f := range p.Flags {
		if f.Name == "--arg-file" {
			r.reads = append(r.reads, f.Value)
		}
	}
	return r
}

// xargsInput stands for the arguments xargs reads from its input. It
// starts with "$" so that it counts as a word that may be an option.
const xargsInput = "$(xargs input)"

func peelSudo(name string, words []string, dyn []bool) peelResult {
	p, why := wrapperArgs(name, words, dyn)
	r := peelResult{label: name, privileged: true, unprovable: why}
	only, shell := false, false
	for _, f := range p.Flags {
		switch f.Name {
		case "--edit":
			r.unprovable = name + " -e edits files as another user"
		case "--shell", "--login":
			shell = true
		case "--list", "--validate", "--reset-timestamp", "--remove-timestamp", "--version", "--help":
			only = true
		case "--chdir":
			r.chdir = f.Value
		}
	}
	i := len(words)
	if len(p.Operands) > 0 {
		i = p.Operands[0] + 1
	}
	for i < len(words) && !dyn[i] && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "=") {
		k, _, _ := strings.Cut(words[i], "=")
		r.env = append(r.env, k)
		i++
	}
	if i >= len(words) {
		if shell {
			r.unprovable = name + " starts an interactive shell"
		}
		if only || shell || r.unprovable != "" {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn, unprovable: r.unprovable, privileged: true}
		}
	}
	n := next(name, words, dyn, i)
	n.privileged, n.env, n.chdir = true, r.env, r.chdir
	if r.unprovable != "" {
		n.unprovable = r.unprovable
	}
	return n
}

func peelSu(name string, words []string, dyn []bool) peelResult {
	p, why := wrapperArgs(name, words, dyn)
	for _, f := range p.Flags {
		if f.Name == "--command" || f.Name == "--session-command" {
			return peelResult{kind: peelScript, label: name + " -c", script: f.Value, scriptDynamic: f.ValueDynamic, privileged: true, unprovable: why}
		}
	}
	if name == "runuser" && p.Has("--user") && len(p.Operands) > 0 {
		// runuser -u user [--] cmd
		k := p.Operands[0] + 1
		return peelResult{kind: peelNext, label: name, rest: words[k:], restDyn: dyn[k:], privileged: true, unprovable: why}
	}
	return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn, privileged: true, unprovable: name + " starts an interactive shell"}
}

// peelFlock handles flock: `flock [opts] lock command...`, `flock [opts]
// lock -c command` and `flock [opts] fd`.
func peelFlock(words []string, dyn []bool) peelResult {
	p, why := wrapperArgs("flock", words, dyn)
	script, scriptDyn, hasC := "", false, false
	for _, f := range p.Flags {
		if f.Name == "--command" {
			script, scriptDyn, hasC = f.Value, f.ValueDynamic, true
		}
	}
	if len(p.Operands) == 0 {
		return peelResult{kind: peelOnly, label: "flock", self: words, selfDyn: dyn, unprovable: why}
	}
	k := p.Operands[0] + 1
	if dyn[k] {
		return peelResult{kind: peelScript, label: "flock", scriptDynamic: true, unprovable: why}
	}
	var writes []string
	if !isNumber(words[k]) {
		writes = []string{words[k]}
	}
	if !hasC && k+1 < len(words) && (words[k+1] == "-c" || words[k+1] == "--command") {
		if k+2 < len(words) {
			script, scriptDyn, hasC = words[k+2], dyn[k+2], true
		} else {
			return peelResult{kind: peelScript, label: "flock -c", scriptDynamic: true, writes: writes, unprovable: why}
		}
	}
	if hasC {
		return peelResult{kind: peelScript, label: "flock -c", script: script, scriptDynamic: scriptDyn, writes: writes, unprovable: why}
	}
	if k+1 >= len(words) {
		return peelResult{kind: peelOnly, label: "flock", self: words, selfDyn: dyn, writes: writes, unprovable: why}
	}
	return peelResult{kind: peelNext, label: "flock", rest: words[k+1:], restDyn: dyn[k+1:], writes: writes, unprovable: why}
}

func peelScriptCmd(words []string, dyn []bool) peelResult {
	p, why := wrapperArgs("script", words, dyn)
	script, scriptDyn, hasC := "", false, false
	var writes []string
	for _, f := range p.Flags {
		switch {
		case f.Name == "--command":
			script, scriptDyn, hasC = f.Value, f.ValueDynamic, true
		case f.Effect == EffectWrite && f.HasValue:
			writes = append(writes, f.Value)
		}
	}
	if len(p.Operands) > 0 {
		writes = append(writes, words[p.Operands[0]+1])
	} else {
		writes = append(writes, "typescript")
	}
	if !hasC {
		return peelResult{kind: peelOnly, label: "script", self: words, selfDyn: dyn, writes: writes, unprovable: "script starts an interactive shell"}
	}
	return peelResult{kind: peelScript, label: "script -c", script: script, scriptDynamic: scriptDyn, writes: writes, unprovable: why}
}
