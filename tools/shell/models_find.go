package shell

import (
	"strings"
	"sync"
)

// find and ps do not use getopt: find takes leading options, start points
// and an expression of single-dash primaries (GNU findutils 4.9 manual);
// ps mixes UNIX options (-ef), BSD options without a dash (aux) and GNU
// long options (procps-ng 4 ps(1)).

// findPrimaries maps find's primaries to the number of words they take;
// -1 means up to a terminating ";" or "+" (-exec and friends). The map is
// built on first use, so that every kz process does not pay for it at
// start.
var findPrimaries = sync.OnceValue(func() map[string]int {
	return map[string]int{
		// Positional options.
		"-daystart": 0, "-follow": 0, "-nowarn": 0, "-warn": 0, "-ignore_readdir_race": 0,
		"-noignore_readdir_race": 0, "-depth": 0, "-d": 0, "-mount": 0, "-xdev": 0, "-noleaf": 0,
		"-regextype": 1, "-maxdepth": 1, "-mindepth": 1, "-files0-from": 1,
		// Tests.
		"-amin": 1, "-anewer": 1, "-atime": 1, "-cmin": 1, "-cnewer": 1, "-ctime": 1, "-empty": 0,
		"-executable": 0, "-false": 0, "-fstype": 1, "-gid": 1, "-group": 1, "-ilname": 1, "-iname": 1,
		"-inum": 1, "-ipath": 1, "-iregex": 1, "-iwholename": 1, "-links": 1, "-lname": 1, "-mmin": 1,
		"-mtime": 1, "-name": 1, "-newer": 1, "-nogroup": 0, "-nouser": 0, "-path": 1, "-perm": 1,
		"-readable": 0, "-regex": 1, "-samefile": 1, "-size": 1, "-true": 0, "-type": 1, "-uid": 1,
		"-used": 1, "-user": 1, "-wholename": 1, "-writable": 0, "-xtype": 1, "-context": 1,
		// Actions.
		"-delete": 0, "-exec": -1, "-execdir": -1, "-ok": -1, "-okdir": -1, "-fls": 1, "-fprint": 1,
		"-fprint0": 1, "-fprintf": 2, "-ls": 0, "-print": 0, "-print0": 0, "-printf": 1, "-prune": 0,
		"-quit": 0,
		// Operators.
		"-not": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0,
		// Information.
		"-help": 0, "--help": 0, "-version": 0, "--version": 0,
	}
})

// findEffects are the primaries that do more than select and print. The map
// is built on first use, so that every kz process does not pay for it at
// start.
var findEffects = sync.OnceValue(func() map[string]Effect {
	return map[string]Effect{
		"-delete": EffectWrites, "-exec": EffectExec, "-execdir": EffectExec, "-ok": EffectExec,
		"-okdir": EffectExec, "-fls": EffectWrite, "-fprint": EffectWrite, "-fprint0": EffectWrite,
		"-fprintf": EffectWrite, "-files0-from": EffectReadList, "-anewer": EffectStat, "-cnewer": EffectStat,
		"-newer": EffectStat, "-samefile": EffectStat,
	}
})

func initFindModels() {
	register(&Model{name: "find", custom: parseFind})
	register(&Model{name: "ps", custom: parsePs})
}

// parseFind returns the start points as operands and every primary as a
// flag (its first word as the value). An -exec flag's words run up to the
// ";" or "+" after Index.
func parseFind(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	i := 0
	// Leading options: -H -L -P -D debugopts -Olevel.
	for i < len(args) && !dyn[i] {
		a := args[i]
		switch {
		case a == "-H" || a == "-L" || a == "-P":
			p.Flags = append(p.Flags, Flag{Name: a, Index: i})
		case a == "-D":
			if i+1 < len(args) {
				p.Flags = append(p.Flags, Flag{Name: a, Index: i, Value: args[i+1], HasValue: true, ValueDynamic: dyn[i+1]})
				i++
			}
		case strings.HasPrefix(a, "-O") && len(a) > 2:
			p.Flags = append(p.Flags, Flag{Name: "-O", Index: i, Value: a[2:], HasValue: true})
		case a == "--":
			i++
			goto starts
		default:
			goto starts
		}
		i++
	}
starts:
	for ; i < len(args); i++ {
		a := args[i]
		if dyn[i] {
			if dynamicPrefix(a) == "" {
				p.MaybeOptions = append(p.MaybeOptions, i)
			} else if a[0] == '-' {
				break
			}
			p.Operands = append(p.Operands, i)
			continue
		}
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		p.Operands = append(p.Operands, i)
	}
	for ; i < len(args); i++ {
		a := args[i]
		if dyn[i] {
			// A non-literal word in the expression may be any primary.
			p.Unknown = append(p.Unknown, a)
			continue
		}
		switch a {
		case "(", ")", "!", ",":
			continue
		}
		n, ok := findPrimaries()[a]
		if !ok && isFindNewerXY(a) {
			n, ok = 1, true
		}
		if !ok {
			p.Unknown = append(p.Unknown, a)
			continue
		}
		f := Flag{Name: a, Index: i, Effect: findEffects()[a]}
		if isFindNewerXY(a) && a[len(a)-1] != 't' {
			f.Effect = EffectStat
		}
		switch {
		case n < 0:
			j := i + 1
			for j < len(args) && !(!dyn[j] && (args[j] == ";" || args[j] == "+" && j > i+1 && strings.Contains(args[j-1], "{}"))) {
				j++
			}
			if i+1 < len(args) {
				f.Value, f.HasValue, f.ValueDynamic = args[i+1], true, dyn[i+1]
			}
			i = j
		case n > 0:
			if i+n >= len(args) {
				p.Unknown = append(p.Unknown, a)
				i = len(args)
				continue
			}
			f.Value, f.HasValue, f.ValueDynamic = args[i+1], true, dyn[i+1]
			i += n
		}
		p.Flags = append(p.Flags, f)
	}
	return p
}

// isFindNewerXY recognises -newerXY (X in aBcm, Y in aBcmt).
func isFindNewerXY(a string) bool {
	return len(a) == 8 && strings.HasPrefix(a, "-newer") && strings.IndexByte("aBcm", a[6]) >= 0 &&
		strings.IndexByte("aBcmt", a[7]) >= 0
}

// ps option tables (procps-ng): UNIX options after "-", BSD options in a
// word without a dash, GNU long options after "--". Those listed with a
// value take the rest of the word or the next one.
var (
	psUnixFlags  = "AacdefFHjlLMNPTwxyZmVq"
	psUnixValues = "CGgOopstUuD"
	psBSDFlags   = "acefhjlLmMnrsSTuvVxXwZH"
	psBSDValues  = "OopqtUkN"
	psLong       = map[string]bool{"context": false, "cumulative": false, "deselect": false, "forest": false,
		"headers": false, "no-headers": false, "help": false, "info": false, "version": false, "signames": false,
		"cols": true, "columns": true, "width": true, "rows": true, "lines": true, "format": true, "group": true,
		"Group": true, "pid": true, "ppid": true, "quick-pid": true, "sid": true, "sort": true, "tty": true,
		"user": true, "User": true}
)

// parsePs parses ps's mixed syntax. BSD `e` (show the environment) is a
// secret flag; so is a format that names the environment.
func parsePs(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] {
			p.Unknown = append(p.Unknown, a)
			continue
		}
		switch {
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			takes, ok := psLong[name]
			if !ok || hasVal && !takes {
				p.Unknown = append(p.Unknown, a)
				continue
			}
			f := Flag{Name: "--" + name, Index: i}
			if takes {
				if !hasVal {
					if i+1 >= len(args) {
						p.Unknown = append(p.Unknown, a)
						continue
					}
					i++
					val = args[i]
				}
				f.Value, f.HasValue = val, true
			}
			p.Flags = append(p.Flags, psFormat(f))
		case isNumber(strings.TrimPrefix(a, "-")) && a != "-":
			// A process id (`ps 42`, `ps -42`).
			p.Operands = append(p.Operands, i)
		default:
			flags, values, prefix := psBSDFlags, psBSDValues, ""
			word := a
			if strings.HasPrefix(a, "-") {
				flags, values, prefix, word = psUnixFlags, psUnixValues, "-", a[1:]
			}
			for j := 0; j < len(word); j++ {
				c := word[j]
				if strings.IndexByte(values, c) >= 0 {
					f := Flag{Name: prefix + string(c), Index: i, HasValue: true, Value: word[j+1:]}
					if f.Value == "" {
						if i+1 >= len(args) {
							p.Unknown = append(p.Unknown, a)
							break
						}
						i++
						f.Value, f.ValueDynamic = args[i], dyn[i]
					}
					p.Flags = append(p.Flags, psFormat(f))
					break
				}
				if strings.IndexByte(flags, c) < 0 {
					p.Unknown = append(p.Unknown, a)
					break
				}
				f := Flag{Name: prefix + string(c), Index: i}
				if prefix == "" && c == 'e' {
					f.Effect = EffectSecret
				}
				p.Flags = append(p.Flags, f)
			}
		}
	}
	return p
}

// psFormat marks a format option that shows the environment.
func psFormat(f Flag) Flag {
	switch f.Name {
	case "-o", "o", "-O", "O", "--format":
		if f.ValueDynamic || strings.Contains(strings.ToLower(f.Value), "env") {
			f.Effect = EffectSecret
		}
	}
	return f
}
