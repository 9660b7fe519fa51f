// Package shell turns a shell command line into a flat, conservative
// analysis for the permission gate: every simple command that can run (in
// any position, inside substitutions and `bash -c` scripts, behind known
// wrappers), the files it writes or reads, environment variables that steer
// other programs, and every reason the analysis could not prove what runs.
//
// The package never executes anything. Its invariant is that anything it
// cannot see through is reported in Unprovable, so that a caller which
// allows only fully proven commands fails closed.
package shell

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits on what is analysed at all. Input beyond them is unprovable.
const (
	// MaxInputBytes caps the command line; a longer one is asked.
	MaxInputBytes = 64 << 10
	// MaxNesting caps the nesting of parentheses, braces and compound
	// keywords, checked before the parser sees the input, so that
	// pathological nesting can neither exhaust the stack nor the time budget.
	MaxNesting = 200
	// MaxScriptDepth caps how deep `bash -c` and `eval` scripts are parsed.
	MaxScriptDepth = 6
	// maxCwds caps the candidate working directories tracked across `cd`.
	maxCwds = 16
)

// Op is what a command does to a target path.
type Op string

// Target operations.
const (
	OpWrite  Op = "write"
	OpRead   Op = "read"
	OpDelete Op = "delete"
)

// Target is a file a command touches. Path is as the shell would see it,
// joined with the effective working directory: absolute, starting with "~"
// (home), or relative to the directory the command line starts in. It is
// not cleaned, because `link/..` means something else than `.` when link is
// a symlink; the caller resolves it against the file system.
type Target struct {
	Path string `json:"path"`
	Op   Op     `json:"op"`
	// By names the program or "redirect" that touches the file.
	By string `json:"by"`
	// Dynamic means the path is not a literal (variables, globs, command
	// substitution, unknown cwd): the real file cannot be known.
	Dynamic bool `json:"dynamic,omitempty"`
	// Glob is set on a dynamic path whose only expansions are globs and
	// braces: the gate may expand it against the file system.
	Glob bool `json:"glob,omitempty"`
	// UnknownCwd is set on a relative path used where the working
	// directory is unknown (after eval, source, a function call, trap,
	// pushd +N, cd -, inside find -execdir): it may be relative to any
	// directory, .git among them.
	UnknownCwd bool `json:"unknown_cwd,omitempty"`
	// Meta is set on a read that sees only names and metadata (ls, stat,
	// find), not the file's content.
	Meta bool `json:"meta,omitempty"`
	// Recursive is set when everything below the path is read or
	// written (grep -r, rg, find, diff -r, rm -r is not: it deletes).
	Recursive bool `json:"recursive,omitempty"`
	// SkipsHidden is set on a recursive read that skips hidden files and
	// directories (rg without --hidden).
	SkipsHidden bool `json:"skips_hidden,omitempty"`
}

// Command is one simple command after quote removal and wrapper peeling.
type Command struct {
	// Name is the program as written after quote removal (it may contain
	// a slash, e.g. "/bin/rm" or "./cat").
	Name string `json:"name"`
	// Args are the arguments after quote removal. An argument that is not
	// a literal has Dynamic[i] set and its Args[i] is the source text.
	Args    []string `json:"args,omitempty"`
	Dynamic []bool   `json:"-"`
	// Wrappers lists peeled wrappers, outermost first ("timeout", "bash -c").
	Wrappers []string `json:"wrappers,omitempty"`
	// Env lists variables assigned in front of the command (VAR=x cmd).
	Env []string `json:"env,omitempty"`
	// DynamicName is set when the program name is not a literal.
	DynamicName bool `json:"dynamic_name,omitempty"`
	// Privileged is set behind sudo, doas and similar.
	Privileged bool `json:"privileged,omitempty"`
	// ReadOnly is set when the program is known not to write files nor run
	// other programs with these arguments.
	ReadOnly bool `json:"read_only,omitempty"`
	// Writes is set when the program is known to change files (cp, rm,
	// git commit, sed -i, patch, ...), whether or not the targets are known.
	Writes bool `json:"writes,omitempty"`
	// Dirs are the candidate directories the command runs in, relative
	// to the start directory ("" is the start directory itself), with
	// git's -C applied; DirUnknown is set when the analysis cannot follow
	// the working directory.
	Dirs       []string `json:"dirs,omitempty"`
	DirUnknown bool     `json:"dir_unknown,omitempty"`
	// destructive caches Destructive's answer, found while classifying.
	destructive    string
	destructiveSet bool
}

// Analysis is the flat view of a command line.
type Analysis struct {
	Commands []Command `json:"commands"`
	Targets  []Target  `json:"targets,omitempty"`
	// Steering lists assignments of variables that make other programs run
	// code (GIT_*, LD_PRELOAD, PAGER, BASH_ENV, ...).
	Steering []string `json:"steering,omitempty"`
	// Unprovable lists why the analysis may be incomplete. Empty means every
	// command that can run is in Commands.
	Unprovable []string `json:"unprovable,omitempty"`
	// Secrets lists reads of secrets that are not files: the environment
	// (env, printenv, set, ps e, awk ENVIRON, jq env, $TOKEN), each
	// naming the sub-command that reads it.
	Secrets []string `json:"secrets,omitempty"`
	// GlobOptions is set when the script may change how globs expand
	// (shopt dotglob or nocaseglob, GLOBIGNORE): a caller expanding a
	// glob must then match dot files and ignore case.
	GlobOptions bool `json:"glob_options,omitempty"`
}

// Provable reports whether the analysis saw everything that can run.
func (a *Analysis) Provable() bool { return len(a.Unprovable) == 0 }

// ReadOnly reports whether the whole command line is proven read-only: every
// command is known read-only, nothing is written, nothing steers execution.
func (a *Analysis) ReadOnly() bool {
	if !a.Provable() || len(a.Steering) > 0 {
		return false
	}
	for _, c := range a.Commands {
		if !c.ReadOnly {
			return false
		}
	}
	for _, t := range a.Targets {
		if t.Op != OpRead && !IsHarmlessDevice(t.Path) {
			return false
		}
	}
	return true
}

// IsHarmlessDevice reports whether p is a device that swallows or echoes
// output (/dev/null, /dev/stdout, /dev/stderr, /dev/fd/0-2) or the pipe of
// a process substitution (ProcSubstPath).
func IsHarmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/0", "/dev/fd/1", "/dev/fd/2", ProcSubstPath:
		return true
	}
	return false
}

// String renders the command normalised: program and arguments with
// quotes removed and re-quoted only where a word needs it.
func (c Command) String() string {
	var b strings.Builder
	b.WriteString(quoteWord(c.Name))
	for i, a := range c.Args {
		b.WriteByte(' ')
		if c.dyn(i) {
			b.WriteString(a)
		} else {
			b.WriteString(quoteWord(a))
		}
	}
	return b.String()
}

// HasDynamic reports whether any argument is not a literal.
func (c Command) HasDynamic() bool {
	for _, d := range c.Dynamic {
		if d {
			return true
		}
	}
	return false
}

func (c Command) dyn(i int) bool { return i < len(c.Dynamic) && c.Dynamic[i] }

// IsDynamic reports whether argument i is not a literal.
func (c Command) IsDynamic(i int) bool { return c.dyn(i) }

// Analyze parses src and returns its analysis. It never fails: a parse
// error, oversized or overly nested input is reported in Unprovable.
func Analyze(src string) *Analysis {
	a := &Analysis{}
	an := &analyzer{out: a}
	an.script(src, 0, &state{cwds: []string{""}})
	if an.arith && an.dynAssign {
		// Bash evaluates a variable's value as an arithmetic expression,
		// and `a[$(cmd)]` inside it runs cmd: a value the analysis cannot
		// see, used in arithmetic, can run anything.
		an.unprovable("arithmetic on a variable whose value is not a literal")
	}
	return a
}

// state is the shell state that flows along a statement list.
type state struct {
	// cwds are the candidate working directories ("" is the start dir).
	cwds []string
	// unknownCwd is set after a `cd` whose target is not a literal.
	unknownCwd bool
}

func (s *state) clone() *state {
	return &state{cwds: append([]string(nil), s.cwds...), unknownCwd: s.unknownCwd}
}

type analyzer struct {
	out *Analysis
	// seen records every CallExpr handled, to prove the walk missed none.
	seen map[*syntax.CallExpr]bool
	// arith is set when the script evaluates arithmetic; dynAssign when
	// it gives a variable a value that is not a literal.
	arith, dynAssign bool
	// funcs are the names of functions and aliases the script defines:
	// a call runs a body that may change the working directory.
	funcs map[string]bool
	// cdpath is set when the script sets CDPATH: `cd name` may then go
	// anywhere.
	cdpath bool
}

func (an *analyzer) unprovable(format string, args ...any) {
	an.out.Unprovable = append(an.out.Unprovable, fmt.Sprintf(format, args...))
}

// script parses and walks one script (the command line, or a `bash -c`
// argument) at the given depth.
func (an *analyzer) script(src string, depth int, st *state) {
	if depth > MaxScriptDepth {
		an.unprovable("nested shell scripts deeper than %d", MaxScriptDepth)
		return
	}
	if len(src) > MaxInputBytes {
		an.unprovable("command longer than %d bytes", MaxInputBytes)
		return
	}
	if n := nestingDepth(src); n > MaxNesting {
		an.unprovable("command nested deeper than %d", MaxNesting)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		an.unprovable("parse error: %v", err)
		return
	}
	if an.seen == nil {
		an.seen = map[*syntax.CallExpr]bool{}
	}
	an.collectFuncs(f)
	w := &walker{an: an, depth: depth}
	w.stmts(f.Stmts, st, false)
	// Cross-check: every simple command in the tree must have been
	// analysed; a construct the walker does not know must not hide one.
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && !an.seen[c] {
			an.unprovable("command in an unsupported construct at %s", c.Pos())
		}
		return true
	})
}

// walker walks one parsed script.
type walker struct {
	an    *analyzer
	depth int
}

// stmts walks a statement list. Statements run in sequence; a `cd` in one
// of them may fail, so later statements may run in either directory.
func (w *walker) stmts(list []*syntax.Stmt, st *state, guarded bool) {
	for i, s := range list {
		// Only the last statement of a list inherits the guarantee that
		// what follows runs after success.
		w.stmt(s, st, guarded && i == len(list)-1)
	}
}

func (w *walker) stmt(s *syntax.Stmt, st *state, guarded bool) {
	if s == nil {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		// A background job runs in a subshell: its cd does not leak.
		st = st.clone()
		guarded = false
	}
	for _, r := range s.Redirs {
		w.redirect(r, st)
	}
	w.command(s.Cmd, s, st, guarded)
}

func (w *walker) redirect(r *syntax.Redirect, st *state) {
	if r.Word != nil {
		w.words(st, r.Word)
	}
	if r.Hdoc != nil {
		w.words(st, r.Hdoc)
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		w.target(st, r.Word, OpWrite, "redirect")
	case syntax.DplOut, syntax.DplIn:
		// `>&2` duplicates a descriptor; `>& file` is bash for `&> file`.
		v, lit := wordValue(r.Word)
		if lit.literal && (v == "-" || isNumber(v)) {
			return
		}
		op := OpWrite
		if r.Op == syntax.DplIn {
			op = OpRead
		}
		w.target(st, r.Word, op, "redirect")
	case syntax.RdrIn:
		w.target(st, r.Word, OpRead, "redirect")
	}
}

// target records a path argument word as a target in every candidate cwd.
func (w *walker) target(st *state, word *syntax.Word, op Op, by string) {
	if word == nil {
		return
	}
	v, info := wordValue(word)
	dyn := !info.literal || info.glob
	w.addTarget(st, Target{Path: v, Op: op, By: by, Dynamic: dyn, Glob: dyn && info.literal})
}

// addTarget records t in every candidate working directory. A relative
// path under an unknown working directory may be below any directory.
func (w *walker) addTarget(st *state, t Target) {
	if t.Path == "" && !t.Dynamic || t.Path == ProcSubstPath {
		// Nothing, or the pipe of a process substitution.
		return
	}
	abs := isAbsPath(t.Path)
	if !abs && st.unknownCwd {
		t.Dynamic, t.UnknownCwd, t.Glob = true, true, false
	}
	if abs || t.Dynamic {
		w.an.out.Targets = append(w.an.out.Targets, t)
		return
	}
	for _, c := range st.cwds {
		u := t
		u.Path = joinCwd(c, t.Path)
		w.an.out.Targets = append(w.an.out.Targets, u)
	}
}

func joinCwd(cwd, p string) string {
	if cwd == "" || strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/") {
		return p
	}
	return strings.TrimSuffix(cwd, "/") + "/" + p
}

// command walks one command node.
func (w *walker) command(cmd syntax.Command, s *syntax.Stmt, st *state, guarded bool) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, s, st, guarded)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			w.stmt(c.X, st, true)
			w.stmt(c.Y, st, guarded)
		case syntax.OrStmt:
			w.stmt(c.X, st, false)
			w.stmt(c.Y, st, guarded)
		default:
			// Each side of a pipe runs in its own subshell.
			w.stmt(c.X, st.clone(), false)
			w.stmt(c.Y, st.clone(), false)
		}
	case *syntax.Subshell:
		w.stmts(c.Stmts, st.clone(), false)
	case *syntax.Block:
		w.stmts(c.Stmts, st, false)
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			w.stmts(cl.Cond, st, false)
			w.stmts(cl.Then, st, false)
		}
	case *syntax.WhileClause:
		w.loop(st, func() {
			w.stmts(c.Cond, st, false)
			w.stmts(c.Do, st, false)
		})
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			w.words(st, l.Items...)
		case *syntax.CStyleLoop:
			w.an.arith = true
			w.arith(st, l.Init, l.Cond, l.Post)
		}
		w.loop(st, func() { w.stmts(c.Do, st, false) })
	case *syntax.CaseClause:
		w.words(st, c.Word)
		for _, it := range c.Items {
			w.words(st, it.Patterns...)
			w.stmts(it.Stmts, st, false)
		}
	case *syntax.FuncDecl:
		// The body runs whenever the function is called, possibly under
		// the name of a harmless program, from any directory: analyse it
		// as if it ran here in an unknown directory.
		body := st.clone()
		body.unknownCwd = true
		w.stmt(c.Body, body, false)
	case *syntax.ArithmCmd:
		w.an.arith = true
		w.arith(st, c.X)
		w.arithWords(c.X)
	case *syntax.LetClause:
		w.an.arith = true
		w.arith(st, c.Exprs...)
		for _, e := range c.Exprs {
			w.arithWords(e)
		}
	case *syntax.TestClause:
		// [[ ]] compares operands of -eq and friends arithmetically and
		// looks up -v operands as variables, subscripts included.
		w.an.arith = true
		w.nodes(st, c.X)
		w.testClause(c.X)
	case *syntax.TimeClause:
		w.stmt(c.Stmt, st, guarded)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, st.clone(), false)
	case *syntax.DeclClause:
		w.decl(c, st)
	case *syntax.TestDecl:
		w.stmt(c.Body, st.clone(), false)
	default:
		w.an.unprovable("unsupported shell construct %T", cmd)
	}
}

func (w *walker) arith(st *state, exprs ...syntax.ArithmExpr) {
	for _, e := range exprs {
		if e != nil {
			w.nodes(st, e)
		}
	}
}

// words walks words for nested commands (substitutions).
func (w *walker) words(st *state, words ...*syntax.Word) {
	for _, wd := range words {
		if wd != nil {
			w.nodes(st, wd)
		}
	}
}

// nodes finds command and process substitutions anywhere below n and walks
// their statements in a subshell state.
func (w *walker) nodes(st *state, n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(x.Stmts, st.clone(), false)
			return false
		case *syntax.ProcSubst:
			w.stmts(x.Stmts, st.clone(), false)
			return false
		case *syntax.ArithmExp:
			w.an.arith = true
			w.arithWords(x.X)
		case *syntax.ParamExp:
			if x.Index != nil {
				w.arithWords(x.Index)
			}
			if x.Index != nil || x.Slice != nil || x.Excl {
				// Subscripts, slices and indirection (${!x}) evaluate
				// values as arithmetic or as variable names.
				w.an.arith = true
			}
			switch {
			case x.Param != nil && SecretName(x.Param.Value) && !x.Length && !x.Excl:
				w.an.out.Secrets = append(w.an.out.Secrets, "$"+x.Param.Value+" expands a variable that may hold a secret")
			case x.Excl && x.Names == 0 && x.Index == nil && x.Param != nil:
				w.an.out.Secrets = append(w.an.out.Secrets, "${!"+x.Param.Value+"} expands whichever variable "+x.Param.Value+" names")
			}
		}
		return true
	})
}

// call handles a simple command.
func (w *walker) call(c *syntax.CallExpr, s *syntax.Stmt, st *state, guarded bool) {
	w.an.seen[c] = true
	var env []string
	for _, a := range c.Assigns {
		if a.Value != nil {
			w.words(st, a.Value)
			if v, info := wordValue(a.Value); !info.literal {
				w.an.dynAssign = true
			} else if subscriptCode(v) {
				w.an.unprovable("assignment may run code through an array subscript: %s", v)
			}
		}
		if a.Array != nil {
			w.an.dynAssign = true
			w.nodes(st, a.Array)
		}
		if a.Index != nil {
			w.nodes(st, a.Index)
			w.arithWords(a.Index)
			w.an.arith = true
		}
		if a.Name != nil {
			env = append(env, a.Name.Value)
			if IsSteeringVar(a.Name.Value) {
				w.an.out.Steering = append(w.an.out.Steering, a.Name.Value)
			}
			if a.Name.Value == "CDPATH" {
				w.an.cdpath = true
			}
			if a.Name.Value == "GLOBIGNORE" {
				w.an.out.GlobOptions = true
			}
		}
	}
	w.words(st, c.Args...)
	if len(c.Args) == 0 {
		return
	}
	words := make([]string, len(c.Args))
	dyn := make([]bool, len(c.Args))
	for i, a := range c.Args {
		v, info := wordValue(a)
		// A glob or brace expansion expands to whatever matches, possibly
		// several words or an option: it is not a literal.
		words[i], dyn[i] = v, !info.literal || info.glob
	}
	if dyn[0] {
		w.an.unprovable("program name is not a literal: %s", words[0])
		w.an.out.Commands = append(w.an.out.Commands, Command{Name: words[0], Args: words[1:], Dynamic: dyn[1:], Env: env, DynamicName: true})
		return
	}
	w.simple(words, dyn, env, nil, false, s, st, guarded)
}

// simple analyses an argv: peels wrappers, parses nested scripts, records
// the command and its targets.
func (w *walker) simple(words []string, dyn []bool, env, wrappers []string, priv bool, s *syntax.Stmt, st *state, guarded bool) {
	for len(words) > 0 {
		if dyn[0] {
			w.an.unprovable("program name is not a literal: %s", words[0])
			w.an.out.Commands = append(w.an.out.Commands, Command{Name: words[0], Args: words[1:], Dynamic: dyn[1:], Env: env, Wrappers: wrappers, Privileged: priv, DynamicName: true, DirUnknown: true})
			return
		}
		w.nameOperands(words, dyn)
		p := peel(words, dyn)
		if p.kind == peelNone {
			break
		}
		wrappers = append(wrappers, p.label)
		env = append(env, p.env...)
		for _, e := range p.env {
			if IsSteeringVar(e) {
				w.an.out.Steering = append(w.an.out.Steering, e)
			}
			if e == "CDPATH" {
				w.an.cdpath = true
			}
		}
		priv = priv || p.privileged
		if p.unprovable != "" {
			w.an.unprovable("%s", p.unprovable)
		}
		for _, t := range p.writes {
			w.addTarget(st, Target{Path: t, Op: OpWrite, By: p.label})
		}
		for _, t := range p.reads {
			w.addTarget(st, Target{Path: t, Op: OpRead, By: p.label})
		}
		if p.chdir != "" {
			st = st.clone()
			w.cd(st, p.chdir, false, true)
		}
		switch p.kind {
		case peelScript:
			if p.scriptDynamic {
				w.an.unprovable("%s script is not a literal", p.label)
				return
			}
			sub := st
			switch p.label {
			case "eval":
				// eval runs in this shell: its cd is this shell's. The
				// joined words may parse differently than they read, so
				// the directory is unknown afterwards anyway.
				defer func() { st.unknownCwd = true }()
			case "trap", "alias":
				// The code runs later, from whatever directory.
				sub = st.clone()
				sub.unknownCwd = true
				st.unknownCwd = true
			default:
				sub = st.clone()
			}
			before := len(w.an.out.Commands)
			w.an.script(p.script, w.depth+1, sub)
			for i := before; i < len(w.an.out.Commands); i++ {
				cm := &w.an.out.Commands[i]
				cm.Wrappers = append(append([]string(nil), wrappers...), cm.Wrappers...)
				cm.Env = append(append([]string(nil), env...), cm.Env...)
				cm.Privileged = cm.Privileged || priv
			}
			return
		case peelOnly:
			// The wrapper runs no command (e.g. `env` printing the
			// environment): it is the command itself.
			words, dyn = p.self, p.selfDyn
			wrappers = wrappers[:len(wrappers)-1]
			w.record(words, dyn, env, wrappers, priv, s, st, guarded)
			return
		}
		words, dyn = p.rest, p.restDyn
	}
	if len(words) == 0 {
		return
	}
	w.record(words, dyn, env, wrappers, priv, s, st, guarded)
}

// record adds the command, its targets, and walks commands it runs itself
// (find -exec, interpreters reading a heredoc script).
func (w *walker) record(words []string, dyn []bool, env, wrappers []string, priv bool, s *syntax.Stmt, st *state, guarded bool) {
	cmd := Command{Name: words[0], Args: words[1:], Dynamic: dyn[1:], Env: env, Wrappers: wrappers, Privileged: priv}
	base := path.Base(cmd.Name)
	info := classify(base, cmd.Args, cmd.Dynamic)
	cmd.ReadOnly, cmd.Writes = info.readOnly, info.writes
	cmd.destructive, cmd.destructiveSet = info.destructive, info.destructiveSet
	if priv || strings.Contains(cmd.Name, "/") && !systemBinary(cmd.Name) {
		// `./cat` is whatever the workspace put there, not cat.
		cmd.ReadOnly = false
	}
	if w.an.funcs[cmd.Name] {
		// A function or alias of the script, not the program.
		cmd.ReadOnly = false
	}
	var parsed Parsed
	if m := modelTable()[base]; m != nil && m.subs != nil {
		parsed = ParseArgs(base, cmd.Args, cmd.Dynamic)
	}
	w.dirs(&cmd, st, parsed)
	w.an.out.Commands = append(w.an.out.Commands, cmd)
	label := base
	if parsed.Sub != "" {
		label = base + " " + parsed.Sub
	}
	for _, t := range info.targets {
		t.By = label
		w.addTarget(st, t)
	}
	for _, sec := range info.secrets {
		w.an.out.Secrets = append(w.an.out.Secrets, sec+" (`"+label+"`)")
	}
	for _, sub := range info.execs {
		es := st.clone()
		es.unknownCwd = es.unknownCwd || info.execCwdUnknown
		w.simple(sub.words, sub.dyn, nil, append(append([]string(nil), wrappers...), base+" -exec"), priv, nil, es, false)
	}
	if info.unprovable != "" {
		w.an.unprovable("%s", info.unprovable)
	}
	if isShell(base) && allFlags(cmd.Args) {
		w.shellStdin(base, s, st)
	}
	if base == "shopt" {
		// dotglob, nocaseglob, globstar change what globs match;
		// cdable_vars lets cd go where a variable says.
		w.an.out.GlobOptions = true
		w.an.cdpath = true
	}
	if base == "set" && len(cmd.Args) == 0 {
		w.an.out.Secrets = append(w.an.out.Secrets, "`set` prints every variable, secrets included")
	}
	w.cwdAfter(base, cmd, st, guarded)
}

// shellStdin handles a shell started without a script: it reads commands
// from stdin, which is analysable only when it is a literal heredoc.
func (w *walker) shellStdin(name string, s *syntax.Stmt, st *state) {
	if s != nil {
		for _, r := range s.Redirs {
			if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
				v, info := wordValue(r.Hdoc)
				if !info.literal {
					w.an.unprovable("%s reads a heredoc script with expansions", name)
					return
				}
				w.an.script(v, w.depth+1, st.clone())
				return
			}
			if r.Op == syntax.WordHdoc {
				v, info := wordValue(r.Word)
				if !info.literal {
					w.an.unprovable("%s reads a here-string script with expansions", name)
					return
				}
				w.an.script(v, w.depth+1, st.clone())
				return
			}
		}
	}
	w.an.unprovable("%s reads its script from stdin", name)
}

// systemBinary reports a program path in the standard system directories.
func systemBinary(name string) bool {
	dir := path.Dir(name)
	return dir == "/bin" || dir == "/usr/bin" || dir == "/usr/local/bin" || dir == "/sbin" || dir == "/usr/sbin"
}

func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
