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
	kind          peelKind
	label         string
	rest          []string
	restDyn       []bool
	self          []string
	selfDyn       []bool
	env           []string
	privileged    bool
	unprovable    string
	writes        []string
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
		i := scanOpts(words, dyn, 1, optSpec{short: "sk", long: map[string]bool{"signal": true, "kill-after": true}}, func(string, string, bool) {})
		return next(name, words, dyn, i+1) // skip the duration
	case "nice":
		i := 1
		if i < len(words) && len(words[i]) > 1 && words[i][0] == '-' && isNumber(words[i][1:]) {
			i++
		}
		i = scanOpts(words, dyn, i, optSpec{short: "n", long: map[string]bool{"adjustment": true}}, func(string, string, bool) {})
		return next(name, words, dyn, i)
	case "nohup", "builtin", "unbuffer", "catchsegv", "nocorrect", "noglob", "caffeinate", "rlwrap":
		return next(name, words, dyn, 1)
	case "busybox":
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
	case "stdbuf":
		i := scanOpts(words, dyn, 1, optSpec{short: "ioe", long: map[string]bool{"input": true, "output": true, "error": true}}, func(string, string, bool) {})
		return next(name, words, dyn, i)
	case "setsid":
		i := scanOpts(words, dyn, 1, optSpec{}, func(string, string, bool) {})
		return next(name, words, dyn, i)
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
	case "ionice":
		pid := false
		i := scanOpts(words, dyn, 1, optSpec{short: "cnp", long: map[string]bool{"class": true, "classdata": true, "pid": true, "pgid": true, "uid": true}}, func(o, _ string, _ bool) {
			if o == "-p" || o == "-P" || o == "-u" || o == "--pid" || o == "--pgid" || o == "--uid" {
				pid = true
			}
		})
		if pid {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
		}
		return next(name, words, dyn, i)
	case "chrt", "taskset":
		pid := false
		i := scanOpts(words, dyn, 1, optSpec{short: "TPDc", long: map[string]bool{"sched-runtime": true, "sched-period": true, "sched-deadline": true, "cpu-list": true}}, func(o, _ string, _ bool) {
			if o == "-p" || o == "--pid" || o == "-m" || o == "--max" {
				pid = true
			}
		})
		if pid {
			return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn}
		}
		if name == "taskset" && i < len(words) && hasDash(words, "-c", "--cpu-list") {
			// With -c the list was consumed as the option argument.
			return next(name, words, dyn, i)
		}
		return next(name, words, dyn, i+1) // priority or mask
	case "watch":
		i := scanOpts(words, dyn, 1, optSpec{short: "dnq", long: map[string]bool{"interval": true, "differences": true, "equexit": true}}, func(string, string, bool) {})
		return joinedScript(name, words, dyn, i)
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

func hasDash(words []string, opts ...string) bool {
	for _, w := range words {
		for _, o := range opts {
			if w == o {
				return true
			}
		}
	}
	return false
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

func peelEnv(words []string, dyn []bool) peelResult {
	r := peelResult{label: "env"}
	split, splitDyn := "", false
	i := 1
	for i < len(words) {
		w := words[i]
		if dyn[i] {
			r.unprovable = "env with a non-literal argument"
			return peelResult{kind: peelScript, label: "env", scriptDynamic: true}
		}
		if k, _, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "-") && k != "" {
			r.env = append(r.env, k)
			i++
			continue
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			if w == "-" {
				i++
				continue
			}
			break
		}
		if w == "--" {
			i++
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		long := strings.HasPrefix(w, "--")
		takeArg := func() string {
			if hasVal {
				return val
			}
			if !long && len(w) > 2 {
				return w[2:]
			}
			if i+1 < len(words) {
				i++
				if dyn[i] {
					splitDyn = true
				}
				return words[i]
			}
			return ""
		}
		switch {
		case long && (name == "chdir") || !long && strings.HasPrefix(w, "-C"):
			r.chdir = takeArg()
		case long && name == "split-string" || !long && strings.HasPrefix(w, "-S"):
			split = takeArg()
		case long && name == "unset" || !long && strings.HasPrefix(w, "-u"):
			takeArg()
		}
		i++
	}
	if split != "" || splitDyn {
		rest := make([]string, 0, len(words)-i)
		for _, w := range words[i:] {
			rest = append(rest, quoteWord(w))
		}
		return peelResult{kind: peelScript, label: "env -S", env: r.env, chdir: r.chdir,
			script: strings.TrimSpace(split + " " + strings.Join(rest, " ")), scriptDynamic: splitDyn}
	}
	n := next("env", words, dyn, i)
	n.env, n.chdir = r.env, r.chdir
	if n.kind == peelOnly {
		n.env = nil
	}
	return n
}

func peelXargs(words []string, dyn []bool) peelResult {
	replace := ""
	i := scanOpts(words, dyn, 1, optSpec{short: "adEeIiLlnPs", long: map[string]bool{"arg-file": true, "delimiter": true, "eof": true, "replace": true, "max-lines": true, "max-args": true, "max-procs": true, "max-chars": true, "process-slot-var": true}}, func(o, a string, _ bool) {
		switch o {
		case "-I", "--replace":
			replace = a
		case "-i":
			replace = a
			if replace == "" {
				replace = "{}"
			}
		}
	})
	rest := append([]string(nil), words[i:]...)
	restDyn := append([]bool(nil), dyn[i:]...)
	if len(rest) == 0 {
		rest, restDyn = []string{"echo"}, []bool{false}
	}
	if replace != "" {
		for k := 1; k < len(rest); k++ {
			if strings.Contains(rest[k], replace) {
				restDyn[k] = true
			}
		}
		if strings.Contains(rest[0], replace) {
			restDyn[0] = true
		}
	} else {
		// Arguments read from stdin are appended at the end.
		rest = append(rest, "<stdin>")
		restDyn = append(restDyn, true)
	}
	return peelResult{kind: peelNext, label: "xargs", rest: rest, restDyn: restDyn}
}

func peelSudo(name string, words []string, dyn []bool) peelResult {
	r := peelResult{label: name, privileged: true}
	only, shell := false, false
	i := scanOpts(words, dyn, 1, optSpec{short: "ugphCDrtTUa", long: map[string]bool{"user": true, "group": true, "prompt": true, "host": true, "close-from": true, "chdir": true, "role": true, "type": true, "command-timeout": true, "other-user": true, "chroot": true}}, func(o, a string, _ bool) {
		switch o {
		case "-e", "--edit":
			r.unprovable = name + " -e edits files as another user"
		case "-s", "--shell", "-i", "--login":
			shell = true
		case "-l", "--list", "-v", "--validate", "-k", "-K", "--reset-timestamp", "--remove-timestamp", "-V", "--version", "-h", "--help", "-L":
			only = true
		case "-D", "--chdir":
			r.chdir = a
		}
	})
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
	script, scriptDyn, hasC := "", false, false
	i := scanOpts(words, dyn, 1, optSpec{short: "cgGsuw", long: map[string]bool{"command": true, "group": true, "supp-group": true, "shell": true, "user": true, "whitelist-environment": true, "session-command": true}}, func(o, a string, d bool) {
		if o == "-c" || o == "--command" || o == "--session-command" {
			script, scriptDyn, hasC = a, d, true
		}
	})
	if hasC {
		return peelResult{kind: peelScript, label: name + " -c", script: script, scriptDynamic: scriptDyn, privileged: true}
	}
	if name == "runuser" && i < len(words) {
		// runuser -u user -- cmd
		return peelResult{kind: peelNext, label: name, rest: words[i:], restDyn: dyn[i:], privileged: true}
	}
	return peelResult{kind: peelOnly, label: name, self: words, selfDyn: dyn, privileged: true, unprovable: name + " starts an interactive shell"}
}

func peelFlock(words []string, dyn []bool) peelResult {
	script, scriptDyn, hasC := "", false, false
	var operands []int
	i := 1
	for i < len(words) {
		w := words[i]
		switch {
		case dyn[i]:
			return peelResult{kind: peelScript, label: "flock", scriptDynamic: true}
		case w == "-c" || w == "--command":
			if i+1 < len(words) {
				script, scriptDyn, hasC = words[i+1], dyn[i+1], true
			}
			i += 2
			continue
		case w == "-w" || w == "--wait" || w == "--timeout" || w == "-E" || w == "--conflict-exit-code":
			i += 2
			continue
		case strings.HasPrefix(w, "-") && len(operands) == 0:
			i++
			continue
		}
		operands = append(operands, i)
		if len(operands) == 2 && !hasC {
			break
		}
		i++
	}
	if len(operands) == 0 {
		return peelResult{kind: peelOnly, label: "flock", self: words, selfDyn: dyn}
	}
	lock := words[operands[0]]
	var writes []string
	if !isNumber(lock) {
		writes = []string{lock}
	}
	if hasC {
		return peelResult{kind: peelScript, label: "flock -c", script: script, scriptDynamic: scriptDyn, writes: writes}
	}
	if len(operands) < 2 {
		return peelResult{kind: peelOnly, label: "flock", self: words, selfDyn: dyn, writes: writes}
	}
	k := operands[1]
	return peelResult{kind: peelNext, label: "flock", rest: words[k:], restDyn: dyn[k:], writes: writes}
}

func peelScriptCmd(words []string, dyn []bool) peelResult {
	script, scriptDyn, hasC := "", false, false
	var writes []string
	i := scanOpts(words, dyn, 1, optSpec{short: "cEIOBTm", long: map[string]bool{"command": true, "echo": true, "log-in": true, "log-out": true, "log-io": true, "log-timing": true, "logging-format": true, "output-limit": true}}, func(o, a string, d bool) {
		switch o {
		case "-c", "--command":
			script, scriptDyn, hasC = a, d, true
		case "-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io", "--log-timing":
			writes = append(writes, a)
		}
	})
	if i < len(words) {
		writes = append(writes, words[i])
	} else {
		writes = append(writes, "typescript")
	}
	if !hasC {
		return peelResult{kind: peelOnly, label: "script", self: words, selfDyn: dyn, writes: writes, unprovable: "script starts an interactive shell"}
	}
	return peelResult{kind: peelScript, label: "script -c", script: script, scriptDynamic: scriptDyn, writes: writes}
}
