package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates strings in places that look inert: the operands of
// [[ -eq ]] and friends are arithmetic, and an array subscript inside
// arithmetic is expanded again (`a[$(cmd)]` runs cmd); -v operands,
// printf -v, read, mapfile, wait -p, getopts and unset take variable
// names, subscripts included; `declare -n` names are resolved at every
// use. Any such operand holding `$(`, a backtick or `[` is not inert.

// subscriptCode reports a literal that, used as a variable name or
// arithmetic value, runs a command through an array subscript.
func subscriptCode(v string) bool {
	return strings.Contains(v, "[") && strings.ContainsAny(v, "$`")
}

// evalRisk reports literal text bash would evaluate as code when used as
// a variable name or arithmetic operand.
func evalRisk(v string) bool {
	return strings.Contains(v, "[") || strings.Contains(v, "$(") || strings.Contains(v, "`")
}

// wordText returns every literal piece of a word, quoted or not, joined.
func wordText(wd *syntax.Word) string {
	var b strings.Builder
	for _, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String()
}

// testClause checks the operands [[ ]] evaluates.
func (w *walker) testClause(x syntax.TestExpr) {
	syntax.Walk(x, func(n syntax.Node) bool {
		switch e := n.(type) {
		case *syntax.BinaryTest:
			switch e.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				w.evaluatedOperand("[[ "+e.Op.String()+" ]] operand", e.X)
				w.evaluatedOperand("[[ "+e.Op.String()+" ]] operand", e.Y)
			}
		case *syntax.UnaryTest:
			if e.Op == syntax.TsVarSet || e.Op == syntax.TsRefVar {
				w.evaluatedOperand("[[ "+e.Op.String()+" ]] operand", e.X)
			}
		}
		return true
	})
}

func (w *walker) evaluatedOperand(what string, x syntax.TestExpr) {
	wd, ok := x.(*syntax.Word)
	if !ok {
		return
	}
	if t := wordText(wd); evalRisk(t) {
		w.an.unprovable("%s %s is evaluated by bash and may run code", what, t)
	}
}

// arithWords checks the quoted words inside an arithmetic expression:
// after quote removal bash evaluates them, subscripts included.
func (w *walker) arithWords(x syntax.Node) {
	syntax.Walk(x, func(n syntax.Node) bool {
		wd, ok := n.(*syntax.Word)
		if !ok {
			return true
		}
		for _, part := range wd.Parts {
			switch part.(type) {
			case *syntax.SglQuoted, *syntax.DblQuoted:
				if t := wordText(wd); strings.Contains(t, "$(") || strings.Contains(t, "`") || strings.Contains(t, "[") {
					w.an.unprovable("arithmetic on the quoted text %s, which bash evaluates", t)
					return false
				}
			}
		}
		return true
	})
}

// nameOperands checks the builtins that take variable names or arithmetic
// as arguments: a name that is not a literal or holds `[` (a subscript
// bash evaluates) may run code. They also give variables values read at
// run time, which arithmetic elsewhere would evaluate.
func (w *walker) nameOperands(words []string, dyn []bool) {
	name := words[0]
	args, adyn := words[1:], dyn[1:]
	check := func(i int, what string) {
		if i < 0 || i >= len(args) {
			return
		}
		if adyn[i] {
			w.an.unprovable("%s: the variable name %s is not a literal", name+" "+what, args[i])
		} else if evalRisk(args[i]) {
			w.an.unprovable("%s: the variable name %s holds a subscript bash evaluates", name+" "+what, args[i])
		}
	}
	switch name {
	case "test", "[":
		for i, a := range args {
			if !adyn[i] && (a == "-v" || a == "-R") {
				check(i+1, a)
			}
		}
	case "let":
		w.an.arith = true
		for i, a := range args {
			if adyn[i] || subscriptCode(a) {
				w.an.unprovable("let evaluates %s, which may run code", a)
			}
		}
	case "printf", "read", "mapfile", "readarray", "wait", "getopts", "unset":
		p := ParseArgs(name, args, adyn)
		for _, f := range p.Flags {
			switch {
			case f.Effect == EffectExec:
				w.an.unprovable("%s %s runs code", name, f.Name)
			case f.Name == "-v" && name == "printf", f.Name == "-a" && name == "read", f.Name == "-p" && name == "wait":
				w.an.dynAssign = true
				if f.ValueDynamic {
					w.an.unprovable("%s %s: the variable name %s is not a literal", name, f.Name, f.Value)
				} else if evalRisk(f.Value) {
					w.an.unprovable("%s %s: the variable name %s holds a subscript bash evaluates", name, f.Name, f.Value)
				}
			}
		}
		ops := p.Operands
		switch name {
		case "printf", "wait":
			return // their operands are a format, values or job ids
		case "getopts":
			if len(ops) > 1 {
				ops = ops[1:2]
			}
		}
		if name != "unset" {
			w.an.dynAssign = true
		}
		for _, i := range ops {
			check(i, "")
		}
	}
}

// decl handles declare/export/local/readonly/typeset.
func (w *walker) decl(d *syntax.DeclClause, st *state) {
	name := d.Variant.Value
	cmd := Command{Name: name}
	nameref, listing, names := false, false, 0
	for _, a := range d.Args {
		if a.Value != nil {
			w.words(st, a.Value)
			if v, info := wordValue(a.Value); !info.literal {
				w.an.dynAssign = true
			} else if subscriptCode(v) {
				w.an.unprovable("%s argument may run code through an array subscript: %s", name, v)
			}
		}
		if a.Name == nil && a.Value != nil {
			v, info := wordValue(a.Value)
			// declare -i makes later assignments arithmetic.
			if !info.literal || strings.HasPrefix(v, "-") && strings.Contains(v, "i") {
				w.an.arith = true
			}
			if info.literal && (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) {
				nameref = nameref || strings.Contains(v, "n")
				listing = listing || strings.Contains(v, "p")
				if strings.ContainsAny(v, "fF") {
					names++ // functions, not variables, are listed
				}
				continue
			}
		}
		names++
		if a.Array != nil {
			w.nodes(st, a.Array)
		}
		if a.Index != nil {
			w.nodes(st, a.Index)
			w.an.arith = true
		}
		if a.Name != nil {
			if IsSteeringVar(a.Name.Value) && !a.Naked {
				w.an.out.Steering = append(w.an.out.Steering, a.Name.Value)
			}
			if a.Name.Value == "CDPATH" {
				w.an.cdpath = true
			}
			if nameref && a.Value != nil {
				// A name reference is resolved, subscript included, at
				// every use.
				if v, _ := wordValue(a.Value); strings.ContainsAny(v, "[`$") {
					w.an.unprovable("%s -n refers to %s, which bash evaluates at every use", name, v)
				}
			}
			cmd.Args = append(cmd.Args, a.Name.Value)
			cmd.Dynamic = append(cmd.Dynamic, false)
		} else if a.Value != nil {
			// `export $x` may assign anything.
			v, info := wordValue(a.Value)
			if !info.literal {
				w.an.unprovable("%s with a non-literal argument", name)
			} else if strings.Contains(v, "[") {
				w.an.unprovable("%s argument names an array element, whose subscript bash evaluates: %s", name, v)
			}
			cmd.Args = append(cmd.Args, v)
			cmd.Dynamic = append(cmd.Dynamic, !info.literal)
			if k, _, ok := strings.Cut(v, "="); ok && IsSteeringVar(k) {
				w.an.out.Steering = append(w.an.out.Steering, k)
			}
		}
	}
	if listing || names == 0 {
		// `export`, `declare -p` print variables with their values.
		w.an.out.Secrets = append(w.an.out.Secrets, "`"+name+"` prints variables, secrets included")
	}
	// Declaring variables changes no file; steering is reported apart.
	cmd.ReadOnly = true
	w.an.out.Commands = append(w.an.out.Commands, cmd)
}
