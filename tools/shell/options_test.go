package shell

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// rawCommand returns the first simple command of src as written, without
// peeling wrappers.
func rawCommand(t *testing.T, src string) Command {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		t.Fatal(err)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		t.Fatalf("%q is not a simple command", src)
	}
	var c Command
	for i, w := range call.Args {
		v, info := wordValue(w)
		if i == 0 {
			c.Name = v
			continue
		}
		c.Args = append(c.Args, v)
		c.Dynamic = append(c.Dynamic, !info.literal || info.glob)
	}
	return c
}

// flagList renders flags as "name" or "name=value" for comparison.
func flagList(p Parsed) []string {
	var out []string
	for _, f := range p.Flags {
		if f.HasValue {
			out = append(out, f.Name+"="+f.Value)
		} else {
			out = append(out, f.Name)
		}
	}
	return out
}

func operandWords(p Parsed, args []string) []string {
	var out []string
	for _, i := range p.Operands {
		out = append(out, args[i])
	}
	return out
}

// TestParseArgs is class 1 (option models): GNU getopt_long semantics,
// every spelling of an option reaching one canonical name, and unknown
// options reported in any spelling.
func TestParseArgs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd      string
		flags    string // space-separated canonical flags, name=value
		operands string
		unknown  string
		sub      string
	}{
		// Abbreviated long options.
		{cmd: "sort --outp=x f", flags: "--output=x", operands: "f"},
		{cmd: "sort --out x f", flags: "--output=x", operands: "f"},
		{cmd: "sort --o x f", flags: "--output=x", operands: "f"},
		{cmd: "ls --hid=x", operands: "", unknown: "--hid=x"},
		{cmd: "sed --expr=p f", flags: "--expression=p", operands: "f"},
		{cmd: "sed --e=p f", flags: "--expression=p", operands: "f"},
		{cmd: "cp --re a b", operands: "a b", unknown: "--re"},
		{cmd: "ls --col=never", flags: "--color=never"},
		{cmd: "ls --colo", flags: "--color"},
		{cmd: "grep --colou=always x", flags: "--color=always", operands: "x"},
		{cmd: "rm --rec --forc a", flags: "--recursive --force", operands: "a"},
		{cmd: "rm --re a", flags: "--recursive", operands: "a"},
		{cmd: "cp --tar=d x", flags: "--target-directory=d", operands: "x"},
		{cmd: "env --ch=d ls", flags: "--chdir=d", operands: "ls"},
		{cmd: "env --spl='ls x'", flags: "--split-string=ls x"},
		// Grouped and attached short options.
		{cmd: "rm -rf a", flags: "--recursive --force", operands: "a"},
		{cmd: "rm -fr a", flags: "--force --recursive", operands: "a"},
		{cmd: "rm -r -f a", flags: "--recursive --force", operands: "a"},
		{cmd: "rm -R a", flags: "--recursive", operands: "a"},
		{cmd: "head -n5 f", flags: "--lines=5", operands: "f"},
		{cmd: "head -5 f", flags: "--lines=5", operands: "f"},
		{cmd: "head -5c .env", flags: "--lines=5c", operands: ".env"},
		{cmd: "sort -oFILE in", flags: "--output=FILE", operands: "in"},
		{cmd: "sort -rno out in", flags: "--reverse --numeric-sort --output=out", operands: "in"},
		{cmd: "env -iS'rm -rf x'", flags: "--ignore-environment --split-string=rm -rf x"},
		{cmd: "env -iC.git ls", flags: "--ignore-environment --chdir=.git", operands: "ls"},
		{cmd: "grep -5 x f", flags: "--context=5", operands: "x f"},
		{cmd: "grep -iC3 x f", flags: "--ignore-case --context=3", operands: "x f"},
		{cmd: "grep -ef f", flags: "--regexp=f", operands: "f"},
		// -- ends options; options after operands (GNU).
		{cmd: "rm -- -rf", operands: "-rf"},
		{cmd: "sort in -o out", flags: "--output=out", operands: "in"},
		{cmd: "grep x f -r", flags: "--recursive", operands: "x f"},
		{cmd: "env A=1 ls -l", operands: "A=1 ls -l"},
		{cmd: "xargs grep -r x", operands: "grep -r x"},
		// Optional values: attached only.
		{cmd: "ls --color always", flags: "--color", operands: "always"},
		{cmd: "ls -F x", flags: "--classify", operands: "x"},
		{cmd: "sed -i.bak s/a/b/ f", flags: "--in-place=.bak", operands: "s/a/b/ f"},
		{cmd: "sed -ni p f", flags: "--quiet --in-place", operands: "p f"},
		{cmd: "diff -c a b", flags: "--context", operands: "a b"},
		{cmd: "diff -C 3 a b", flags: "--context=3", operands: "a b"},
		// A value given to a flag that takes none is refused.
		{cmd: "rm --force=yes a", operands: "a", unknown: "--force=yes"},
		// Unknown options in every spelling.
		{cmd: "cat -Q f", operands: "f", unknown: "-Q"},
		{cmd: "cat -nQ f", flags: "--number", operands: "f", unknown: "-nQ"},
		{cmd: "cat --frobnicate f", operands: "f", unknown: "--frobnicate"},
		{cmd: "ls --hide=x", flags: "--hide=x"},
		// find, ps, jq, xxd, tree.
		{cmd: "find . -name '*.go' -type f", flags: "-name=*.go -type=f", operands: "."},
		{cmd: "find -L a b -newermt x -print", flags: "-L -newermt=x -print", operands: "a b"},
		{cmd: "find . -exec rm {} \\; -print", flags: "-exec=rm -print", operands: "."},
		{cmd: "find . -frobnicate", operands: ".", unknown: "-frobnicate"},
		{cmd: "ps aux", flags: "a u x"},
		{cmd: "ps eww", flags: "e w w"},
		{cmd: "ps -ef", flags: "-e -f"},
		{cmd: "ps -o pid,environ", flags: "-o=pid,environ"},
		{cmd: "ps --sort=-rss", flags: "--sort=-rss"},
		{cmd: "jq -r .a f", flags: "--raw-output", operands: ".a f"},
		{cmd: "jq --arg k v -n .", flags: "--arg=k=v --null-input", operands: "."},
		{cmd: "jq --rawfile s .env -n $s", flags: "--rawfile=.env --null-input", operands: "$s"},
		{cmd: "xxd -c8 -s 16 f", flags: "-c=8 -s=16", operands: "f"},
		{cmd: "xxd -cols 8 f out", flags: "-c=8", operands: "f out"},
		{cmd: "tree -oL out 2 .", flags: "-o=out -L=2", operands: "."},
		// Sub-commands after global options.
		{cmd: "git -C . push -f", flags: "-C=. --force", sub: "push"},
		{cmd: "git -C . push --for origin", flags: "-C=.", operands: "origin", unknown: "--for", sub: "push"},
		{cmd: "git push --verb origin", flags: "--verbose", operands: "origin", sub: "push"},
		{cmd: "git log --oneline -5 -- a", flags: "--oneline --max-count=5", operands: "a", sub: "log"},
		{cmd: "git log --onel", unknown: "--onel", sub: "log"},
		{cmd: "git status --short --untracked=no", flags: "--short --untracked-files=no", sub: "status"},
		{cmd: "git -c a=b --no-pager log", flags: "-c=a=b --no-pager", sub: "log"},
		{cmd: "git --git-dir x status", flags: "--git-dir=x", sub: "status"},
		{cmd: "git -Cx status", unknown: "-Cx", sub: "status"},
		{cmd: "npm --prefix . publish", flags: "--prefix=.", sub: "publish"},
		{cmd: "npm -C . run build", flags: "--prefix=.", operands: "build", sub: "run"},
		{cmd: "go -C sub test ./...", flags: "-C=sub", operands: "./...", sub: "test"},
		{cmd: "cargo -C sub --locked build", flags: "-C=sub --locked", sub: "build"},
		{cmd: "docker --context x -D ps", flags: "--context=x --debug", sub: "ps"},
		{cmd: "kubectl -n prod get pods", flags: "--namespace=prod", operands: "pods", sub: "get"},
		{cmd: "kubectl --kubeconfig k delete ns x", flags: "--kubeconfig=k", operands: "ns x", sub: "delete"},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			cmd := rawCommand(t, c.cmd)
			p := ParseArgs(cmd.Name, cmd.Args, cmd.Dynamic)
			if !p.Model && c.sub == "" && !strings.HasPrefix(c.cmd, "git") {
				t.Fatalf("no model for %s", cmd.Name)
			}
			if got := strings.Join(flagList(p), " "); got != c.flags {
				t.Errorf("flags %q, want %q", got, c.flags)
			}
			if got := strings.Join(operandWords(p, cmd.Args), " "); got != c.operands {
				t.Errorf("operands %q, want %q", got, c.operands)
			}
			if got := strings.Join(p.Unknown, " "); got != c.unknown {
				t.Errorf("unknown %q, want %q", got, c.unknown)
			}
			if p.Sub != c.sub {
				t.Errorf("sub %q, want %q", p.Sub, c.sub)
			}
			if c.sub != "" && cmd.Args[p.SubIndex] != c.sub {
				t.Errorf("sub index %d names %q", p.SubIndex, cmd.Args[p.SubIndex])
			}
		})
	}
}

// TestParseArgsEquivalentSpellings checks that every spelling of the same
// options parses to the same canonical flags, the property rule matching
// builds on.
func TestParseArgsEquivalentSpellings(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"rm -rf x", "rm -fr x", "rm -r -f x", "rm -f -r x", "rm --recursive --force x", "rm -R --force x",
			"rm --recur --for x", "rm x -rf", "rm -Rf x"},
		{"sort -o out in", "sort -oout in", "sort --output=out in", "sort --output out in", "sort --outp=out in", "sort in -o out"},
		{"grep -ri x .", "grep -i -r x .", "grep --ignore-case --recursive x .", "grep --ignore-c --recurs x .", "grep x . -ir", "grep -y -r x ."},
	}
	for _, g := range groups {
		want := ""
		for k, cmd := range g {
			w := strings.Fields(cmd)
			p := ParseArgs(w[0], w[1:], nil)
			fl := flagList(p)
			slices.Sort(fl)
			got := fmt.Sprint(fl, operandWords(p, w[1:]), p.Unknown)
			if k == 0 {
				want = got
			} else if got != want {
				t.Errorf("%q parses to %s, %q to %s", cmd, got, g[0], want)
			}
		}
	}
}

// TestParseArgsDynamic covers non-literal words: one that may expand to an
// option is reported, one whose literal start is an option name keeps it.
func TestParseArgsDynamic(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args    []string
		dyn     []bool
		flags   string
		maybe   int
		unknown int
	}{
		{args: []string{"$x", "f"}, dyn: []bool{true, false}, maybe: 1},
		{args: []string{"*"}, dyn: []bool{true}, maybe: 1},
		{args: []string{"src/*.go"}, dyn: []bool{true}},
		{args: []string{"--output=$f", "in"}, dyn: []bool{true, false}, flags: "--output=$f"},
		{args: []string{"-o$f", "in"}, dyn: []bool{true, false}, flags: "--output=$f"},
		{args: []string{"-r$x", "in"}, dyn: []bool{true, false}, flags: "--reverse", unknown: 1},
		{args: []string{"--out$x", "in"}, dyn: []bool{true, false}, unknown: 1},
	}
	for _, c := range cases {
		p := ParseArgs("sort", c.args, c.dyn)
		if got := strings.Join(flagList(p), " "); got != c.flags {
			t.Errorf("%q: flags %q, want %q", c.args, got, c.flags)
		}
		if len(p.MaybeOptions) != c.maybe || len(p.Unknown) != c.unknown {
			t.Errorf("%q: maybe %v unknown %q", c.args, p.MaybeOptions, p.Unknown)
		}
	}
}

// TestEveryReaderHasAModel: a program the analysis may prove read-only
// must have a model, or its options could not be known.
func TestEveryReaderHasAModel(t *testing.T) {
	t.Parallel()
	for name := range readers() {
		if modelTable()[name] == nil {
			t.Errorf("%s is a reader without a model", name)
		}
	}
}

func TestKnownOptions(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"ls -la src": true, "grep -rn x .": true, "cat -Q f": false, "sort $o f": false, "wc -l *.go": true,
		"git log --oneline": true, "git frobnicate": false, "python3 x.py": false, "$x f": false,
	} {
		a := Analyze(src)
		if got := KnownOptions(a.Commands[0]); got != want {
			t.Errorf("%q: KnownOptions %v, want %v", src, got, want)
		}
	}
}

// Prepare, called in the background when a turn starts, may run while the
// gate's first command is analysed: both wait for the same build, and the
// analysis sees every model.
func TestPrepareRacesTheFirstAnalysis(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Prepare()
	}()
	a := Analyze("git status --short && grep -rn foo .")
	<-done
	if !a.ReadOnly() {
		t.Fatalf("analysed while the models were built: not read-only: %+v", a)
	}
	for _, name := range []string{"git", "grep", "ls", "find", "sed"} {
		if modelTable()[name] == nil {
			t.Errorf("no model of %s after Prepare", name)
		}
	}
}
