package permission

import (
	"path"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/tools/shell"
)

// A Bash rule names a command by its words, and means the command those
// words run, however it is spelled: `Bash(rm -rf:*)` is rm with the
// recursive and force options, which `rm -fr x`, `rm -r -f x`,
// `rm --recursive --force x`, `rm --rec --forc x` and `rm -Rf x` all are;
// `Bash(git push:*)` is git's push sub-command, which `git -C . push` and
// `git --no-pager -c a=b push` run too. Where the shell analysis has a
// model of the program, the rule's words and the command's arguments are
// both parsed with it (stream B's shell.ParseArgs) and compared as
// programs see them: the sub-commands in order, the options as a set of
// canonical names with their values, the operands in order. Deny and ask
// rules match whenever the command could be the rule's command: an option
// the model does not know, or a word that is not a literal where the
// rule's word would be, is a maybe (asked). Allow rules match only when
// the command certainly is the rule's: every option known, no global
// option the rule does not name (`git -C elsewhere push` is not what
// `Bash(git push:*)` allowed), nothing non-literal in the words the rule
// names. Programs without a model keep the literal word comparison.

// shellSpec is a Bash rule's words parsed as the command they name.
type shellSpec struct {
	args   []string
	parsed shell.Parsed
	// anyValue marks the rule's options whose value was left out
	// (`Bash(git commit -m:*)`): any value matches.
	anyValue map[int]bool
}

// anyValueMark stands for an omitted option value while the rule's words
// are parsed; no command word can hold it.
const anyValueMark = "\x00any"

// parseShellSpec parses a prefix or exact rule's words with the program's
// model, or returns nil when there is none or the words do not parse
// (the rule is then compared word by word).
func parseShellSpec(words []string) *shellSpec {
	if len(words) == 0 || shell.ModelFor(words[0]) == nil {
		return nil
	}
	args := words[1:]
	p := shell.ParseArgs(words[0], args, make([]bool, len(args)))
	sp := &shellSpec{args: args, parsed: p}
	if n := len(p.Unknown); n > 0 && len(args) > 0 && p.Unknown[n-1] == args[len(args)-1] {
		// A last option that takes a value was written without one.
		ext := append(slices.Clone(args), anyValueMark)
		q := shell.ParseArgs(words[0], ext, make([]bool, len(ext)))
		if len(q.Unknown) == 0 && len(q.Flags) > 0 && q.Flags[len(q.Flags)-1].Value == anyValueMark {
			sp.parsed = q
			sp.anyValue = map[int]bool{len(q.Flags) - 1: true}
		}
	}
	if len(sp.parsed.Unknown) > 0 || len(sp.parsed.MaybeOptions) > 0 {
		return nil
	}
	return sp
}

// parsedCommand parses sub-command i of the analysis once per evaluation.
func (e *eval) parsedCommand(i int) *shell.Parsed {
	if e.parses == nil {
		e.parses = make([]*shell.Parsed, len(e.an.Commands))
	}
	if e.parses[i] == nil {
		c := e.an.Commands[i]
		p := shell.ParseArgs(c.Name, c.Args, dynFlags(c))
		e.parses[i] = &p
	}
	return e.parses[i]
}

// dynFlags returns c's per-argument dynamic flags, full length.
func dynFlags(c shell.Command) []bool {
	d := make([]bool, len(c.Args))
	for i := range c.Args {
		d[i] = c.IsDynamic(i)
	}
	return d
}

// ruleMatch matches a Bash rule against sub-command i of the analysis.
func (e *eval) ruleMatch(r Rule, i int, forAllow bool) matchResult {
	c := e.an.Commands[i]
	if r.shell == nil || r.matchesAll() || shell.ModelFor(c.Name) == nil {
		words, dyn := commandWords(c)
		m := r.matchCommand(words, dyn, forAllow)
		if m == noMatch && !forAllow && r.glob != "" {
			// Global options do not hide the sub-command from a
			// pattern either: `git -C . push origin` against
			// `Bash(git push *)`.
			if p := e.parsedCommand(i); p.SubIndex > 0 {
				m = r.matchCommand(append([]string{c.Name}, c.Args[p.SubIndex:]...), append([]bool{false}, dyn[1+p.SubIndex:]...), false)
			}
		}
		return m
	}
	if !r.sameProgram(c, forAllow) {
		return noMatch
	}
	return r.shell.compare(c, e.parsedCommand(i), r.exact != nil, forAllow)
}

// sameProgram compares the program: by base name for deny and ask rules
// (`/bin/rm` is rm), as a bare name found through PATH for allow rules.
func (r Rule) sameProgram(c shell.Command, forAllow bool) bool {
	prog := r.programWord()
	if forAllow {
		return !c.DynamicName && !strings.Contains(c.Name, "/") && c.Name == prog
	}
	return path.Base(c.Name) == path.Base(prog)
}

// compare matches the parsed rule against a parsed command.
func (sp *shellSpec) compare(c shell.Command, cp *shell.Parsed, exact, forAllow bool) matchResult {
	res := match
	// maybe records a doubt: it makes a restricting rule ask and an
	// allow rule not match.
	maybe := func() bool {
		if forAllow {
			return false
		}
		res = maybeMatch
		return true
	}
	uncertain := len(cp.Unknown) > 0 || len(cp.MaybeOptions) > 0
	if forAllow && (len(cp.Unknown) > 0 || !cp.Model && sp.parsed.Model) {
		return noMatch
	}

	// Sub-commands, in order.
	rp := &sp.parsed
	if len(rp.Subs) > 0 {
		if len(cp.Subs) == 0 {
			if !anyDynamic(c) || !maybe() {
				return noMatch
			}
		}
		for k, ri := range rp.Subs {
			if k >= len(cp.Subs) {
				if len(cp.Subs) > 0 {
					return noMatch
				}
				break
			}
			ci := cp.Subs[k]
			if c.IsDynamic(ci) {
				if !maybe() {
					return noMatch
				}
				continue
			}
			if c.Args[ci] != sp.args[ri] {
				return noMatch
			}
		}
		if exact && len(cp.Subs) > len(rp.Subs) {
			return noMatch
		}
	}

	// Options, as a set.
	for k, rf := range rp.Flags {
		found, doubt := false, false
		for _, cf := range cp.Flags {
			if cf.Name != rf.Name {
				continue
			}
			switch {
			case sp.anyValue[k] || !rf.HasValue:
				found = true
			case cf.ValueDynamic:
				doubt = true
			case cf.Value == rf.Value:
				found = true
			}
		}
		if !found {
			if !(doubt || uncertain) || !maybe() {
				return noMatch
			}
		}
	}
	if exact || forAllow {
		// An exact rule names all the options; an allow rule, at least
		// the global ones (they change what the sub-command works on).
		for _, cf := range cp.Flags {
			if !exact && !cf.Global {
				continue
			}
			if !sp.hasFlag(cf) {
				return noMatch
			}
		}
	}

	// Operands, in order: the rule's are a prefix of the command's (all
	// of them for an exact rule).
	for k, ri := range rp.Operands {
		if k >= len(cp.Operands) {
			if !uncertain || !maybe() {
				return noMatch
			}
			break
		}
		ci := cp.Operands[k]
		if c.IsDynamic(ci) {
			if !maybe() {
				return noMatch
			}
			continue
		}
		if c.Args[ci] != sp.args[ri] {
			if !uncertain || !maybe() {
				return noMatch
			}
		}
	}
	if exact && len(cp.Operands) != len(rp.Operands) {
		if !uncertain || !maybe() {
			return noMatch
		}
	}
	if exact && uncertain && !maybe() {
		return noMatch
	}
	return res
}

// hasFlag reports whether the rule names the command's option (with its
// value, unless the rule left the value out).
func (sp *shellSpec) hasFlag(cf shell.Flag) bool {
	for k, rf := range sp.parsed.Flags {
		if rf.Name == cf.Name && (sp.anyValue[k] || !rf.HasValue || !cf.ValueDynamic && rf.Value == cf.Value) {
			return true
		}
	}
	return false
}

func anyDynamic(c shell.Command) bool {
	for i := range c.Args {
		if c.IsDynamic(i) {
			return true
		}
	}
	return false
}
