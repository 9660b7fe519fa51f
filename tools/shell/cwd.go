package shell

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The analysis follows the working directory through cd, pushd and popd
// so that `cd .git && echo x > config` is seen to write .git/config. What
// it cannot follow makes the directory unknown: a relative path after it
// may be below any directory, .git included (Target.UnknownCwd), and the
// gate judges it so.

// collectFuncs records the functions and aliases a script defines, so that
// calling one is known to run a body that may change the directory.
func (an *analyzer) collectFuncs(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.FuncDecl:
			if an.funcs == nil {
				an.funcs = map[string]bool{}
			}
			names := x.Names
			if x.Name != nil {
				names = append(names, x.Name)
			}
			if len(names) == 0 {
				// A function without a name (zsh's anonymous functions
				// run at once) is nothing bash would run as written.
				an.unprovable("a function without a name")
			}
			for _, n := range names {
				an.funcs[n.Value] = true
			}
		case *syntax.CallExpr:
			if len(x.Args) > 1 {
				if v, info := wordValue(x.Args[0]); info.literal && v == "alias" {
					for _, a := range x.Args[1:] {
						if v, _ := wordValue(a); strings.Contains(v, "=") {
							if an.funcs == nil {
								an.funcs = map[string]bool{}
							}
							name, _, _ := strings.Cut(v, "=")
							an.funcs[name] = true
						}
					}
				}
			}
		}
		return true
	})
}

// loop walks a loop. When the body changes the working directory, the
// next iteration starts elsewhere: the body is walked again with the
// directory unknown (its commands are recorded once, its targets twice).
func (w *walker) loop(st *state, body func()) {
	before := st.clone()
	body()
	if st.unknownCwd == before.unknownCwd && slices.Equal(st.cwds, before.cwds) {
		return
	}
	st.unknownCwd = true
	n := len(w.an.out.Commands)
	body()
	w.an.out.Commands = w.an.out.Commands[:n]
}

// dirs sets the directories a command runs in; for git, its -C options
// are applied.
func (w *walker) dirs(c *Command, st *state, p Parsed) {
	if st.unknownCwd {
		c.DirUnknown = true
		return
	}
	c.Dirs = st.cwds
	if path.Base(c.Name) != "git" {
		return
	}
	var cs []string
	for _, f := range p.Flags {
		if f.Name != "-C" || !f.Global {
			continue
		}
		if f.ValueDynamic {
			c.Dirs, c.DirUnknown = nil, true
			return
		}
		cs = append(cs, f.Value)
	}
	if len(cs) == 0 {
		return
	}
	var out []string
	for _, d := range st.cwds {
		for _, x := range cs {
			if x != "" {
				d = joinCwd(d, x)
			}
		}
		out = append(out, d)
	}
	c.Dirs = out
}

// cwdAfter applies what a command does to the working directory of the
// commands after it.
func (w *walker) cwdAfter(base string, c Command, st *state, guarded bool) {
	switch base {
	case "cd":
		p := ParseArgs("cd", c.Args, c.Dynamic)
		switch {
		case len(p.Unknown) > 0 || len(p.Operands) > 1:
			st.unknownCwd = true
		case len(p.Operands) == 0:
			w.cd(st, "~", false, guarded)
		default:
			k := p.Operands[0]
			w.cd(st, c.Args[k], c.dyn(k) || c.Args[k] == "-", guarded)
		}
	case "pushd":
		p := ParseArgs("pushd", c.Args, c.Dynamic)
		switch {
		case p.Has("-n"):
			// Only the stack changes.
		case len(p.Unknown) > 0 || len(p.Operands) != 1:
			// No operand swaps the top two directories.
			st.unknownCwd = true
		default:
			k := p.Operands[0]
			d := c.Args[k]
			w.cd(st, d, c.dyn(k) || isStackPos(d), guarded)
		}
	case "popd":
		if !ParseArgs("popd", c.Args, c.Dynamic).Has("-n") {
			st.unknownCwd = true
		}
	case "source", ".":
		// The sourced file may change the directory and defines what it
		// likes.
		st.unknownCwd = true
	default:
		if w.an.funcs[c.Name] {
			st.unknownCwd = true
		}
	}
}

// isStackPos reports a directory-stack position (+N, -N).
func isStackPos(s string) bool {
	return len(s) > 1 && (s[0] == '+' || s[0] == '-') && isNumber(s[1:])
}

// cd moves the candidate working directories. When the cd is guarded (what
// follows runs only if it succeeded) the directories are replaced;
// otherwise the old ones remain possible.
func (w *walker) cd(st *state, dir string, dynamic, guarded bool) {
	if dynamic || strings.HasPrefix(dir, "~") && dir != "~" && !strings.HasPrefix(dir, "~/") {
		st.unknownCwd = true
		return
	}
	if w.an.cdpath && !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, ".") && !strings.HasPrefix(dir, "~") {
		// cd looks the name up in CDPATH first.
		st.unknownCwd = true
		return
	}
	next := make([]string, 0, len(st.cwds)*2)
	for _, c := range st.cwds {
		next = append(next, joinCwd(c, dir))
	}
	if !guarded {
		next = append(next, st.cwds...)
	}
	if len(next) > maxCwds {
		st.unknownCwd = true
		return
	}
	st.cwds = dedupe(next)
}
