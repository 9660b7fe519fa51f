package shell

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func names(a *Analysis) []string {
	var out []string
	for _, c := range a.Commands {
		out = append(out, c.Name)
	}
	return out
}

func targets(a *Analysis, op Op) []string {
	var out []string
	for _, t := range a.Targets {
		if t.Op == op {
			out = append(out, t.Path)
		}
	}
	return out
}

func TestCommandsInEveryPosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string
	}{
		{"a && b || c; d & e | f\ng", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"(a; b) && { c; }", []string{"a", "b", "c"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"while a; do b; done; until c; do d; done", []string{"a", "b", "c", "d"}},
		{"for x in $(a); do b; done", []string{"a", "b"}},
		{"case $(a) in x) b;; esac", []string{"a", "b"}},
		{"echo $(a) `b` <(c) >(d)", []string{"a", "b", "c", "d", "echo"}},
		{"x=$(a) y=`b`", []string{"a", "b"}},
		{"f() { a; }; f", []string{"a", "f"}},
		{"echo ${x:-$(a)}", []string{"a", "echo"}},
		{"echo $(( $(a) + 1 ))", []string{"a", "echo"}},
		{"[[ -n $(a) ]]", []string{"a"}},
		{"bash -c 'a; b'", []string{"a", "b"}},
		{"sh -c \"bash -c 'a'\"", []string{"a"}},
		{"eval 'a && b'", []string{"a", "b"}},
		{"timeout -k 1 5 nice -n 2 nohup env -i X=1 command a", []string{"a"}},
		{"sudo -u root -E doas a", []string{"a"}},
		{"xargs -0 -n1 a", []string{"a"}},
		{"stdbuf -oL setsid -f flock -w 3 l a", []string{"a"}},
		{"script -qc a /dev/null", []string{"a"}},
		{"ionice -c3 chrt -b 0 taskset 3 a", []string{"a"}},
		{"time -p a", []string{"a"}},
		{"builtin exec a", []string{"a"}},
		{"find . -exec a {} +", []string{"find", "a"}},
		{"watch -n 1 'a; b'", []string{"a", "b"}},
		{"export X=1", []string{"export"}},
		{"coproc a", []string{"a"}},
		{"bash <<'EOF'\na\nEOF", []string{"bash", "a"}},
		{"bash <<< 'a'", []string{"bash", "a"}},
		{"for ((i=0; i<$(a); i++)); do b; done", []string{"a", "b"}},
		{"arr[$(a)]=1; declare -a x=($(b))", []string{"a", "b"}},
		{"let x=$(a)", []string{"a"}},
		{"((x = $(a)))", []string{"a"}},
		{"local y=$(a)", []string{"a"}},
		{"! a | b", []string{"a", "b"}},
		{"time a", []string{"a"}},
		{"a |& b", []string{"a", "b"}},
		{"trap 'a' EXIT", []string{"a"}},
		{"alias ls='a -x'; ls", []string{"a", "ls"}},
	}
	for _, c := range cases {
		a := Analyze(c.src)
		if !a.Provable() && !strings.Contains(c.src, "bash <<") {
			t.Errorf("%q: unprovable %q", c.src, a.Unprovable)
		}
		got := names(a)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: commands %q lack %q", c.src, got, w)
			}
		}
	}
}

func TestQuoteRemoval(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		`r''m x`: "rm", `"rm" x`: "rm", `r\m x`: "rm", `$'\x72m' x`: "rm", `$'\162m' x`: "rm", `'r'"m" x`: "rm",
	} {
		a := Analyze(src)
		if len(a.Commands) != 1 || a.Commands[0].Name != want {
			t.Errorf("%q: %q", src, names(a))
		}
	}
}

func TestUnprovable(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"$a -rf x", "${IFS}rm x", "$(echo rm) x", "`echo rm` x", "{r,}m x", "r* x",
		"echo 'unterminated", "bash -c \"$x\"", "eval $x", "curl x | sh", "sudo -s", "su -c \"$x\"",
		strings.Repeat("a", MaxInputBytes+1), strings.Repeat("$(", 10000) + strings.Repeat(")", 10000),
		strings.Repeat("bash -c '", 1) + strings.Repeat("bash -c \\'", 10) + "x",
		"git -c core.pager=x log", "git -c color.ui=never log", "git --git-dir=/x status", "git diff --ext-diff", "fd -x rm", "export $x",
		"env \"$x\" ls", "flock l -c \"$x\"", "script",
		"printf -v 'a[$(rm -rf x)]' x", "test -v 'a[$(rm x)]'", "read 'a[$(rm x)]'", "x='a[$(rm x)]'; echo $((x))",
		"read x < f; echo $((x))", "x=$(cat f); [[ $x -eq 1 ]]", "declare 'a[`rm x`]'", "declare -i n; n=$(cat f)",
		"sed -e 'e id' f", "awk '{print > \".git/config\"}' f", "awk -f prog f",
		"tar xf a.tar", "unzip a.zip", "patch -p1 < x.diff",
	} {
		if a := Analyze(src); a.Provable() {
			t.Errorf("%.60q: provable; commands %q", src, names(a))
		}
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src    string
		op     Op
		want   []string
		notRO  bool
		wantRO bool
	}{
		{src: "echo x > a >> b 2> c &> d &>> e >| f", op: OpWrite, want: []string{"a", "b", "c", "d", "e", "f"}},
		{src: "cat < a", op: OpRead, want: []string{"a"}, wantRO: true},
		{src: "ls 2>&1 >/dev/null", op: OpWrite, want: []string{"/dev/null"}, wantRO: true},
		{src: "tee -a a b", op: OpWrite, want: []string{"a", "b"}},
		{src: "cp -r x y dir", op: OpWrite, want: []string{"dir", "dir/x", "dir/y"}},
		{src: "mv x y", op: OpDelete, want: []string{"x"}},
		{src: "install -d a b", op: OpWrite, want: []string{"a", "b"}},
		// A link's target is judged as a write: the link makes it writable.
		{src: "ln -sf t name", op: OpWrite, want: []string{"name", "t", "name/t", "name/t"}},
		{src: "ln -s .git/hooks h", op: OpWrite, want: []string{"h", ".git/hooks", "h/.git/hooks", "h/hooks"}},
		{src: "ln -s ../README.md sub/r", op: OpWrite, want: []string{"sub/r", "sub/../README.md", "sub/r/../README.md", "sub/r/README.md"}},
		{src: "ln -sr .git/config c", op: OpWrite, want: []string{"c", ".git/config", "c/config"}},
		{src: "ln /etc/passwd p", op: OpWrite, want: []string{"p", "/etc/passwd", "p/passwd"}},
		{src: "ln -s /etc", op: OpWrite, want: []string{"etc", "/etc"}},
		{src: "ln -st dir ../a", op: OpWrite, want: []string{"dir", "dir/../a", "dir/a"}},
		{src: "cp -s /etc/passwd p", op: OpWrite, want: []string{"p", "/etc/passwd", "p/passwd"}},
		{src: "cp -l x y", op: OpWrite, want: []string{"y", "x", "y/x"}},
		{src: "perl -pi -e s/a/b/ .git/config x", op: OpWrite, want: []string{".git/config", "x"}},
		{src: "perl -i.bak -pe 's/a/b/' f", op: OpWrite, want: []string{"f"}},
		{src: "perl -pi fix.pl f g", op: OpWrite, want: []string{"f", "g"}},
		{src: "ruby -i -pe 'x' f", op: OpWrite, want: []string{"f"}},
		{src: "perl -ne print f", op: OpWrite, want: nil},
		{src: "go build -o ../bin/x .", op: OpWrite, want: []string{"../bin/x"}},
		{src: "go test -c -o=t.test ./pkg", op: OpWrite, want: []string{"t.test"}},
		{src: "go build -overlay o.json .", op: OpWrite, want: nil},
		{src: "gcc -O2 -o /tmp/a a.c", op: OpWrite, want: []string{"/tmp/a"}},
		{src: "cc -oout a.c", op: OpWrite, want: []string{"out"}},
		{src: "touch -d now a", op: OpWrite, want: []string{"a"}},
		{src: "rm -rf a b", op: OpDelete, want: []string{"a", "b"}},
		{src: "mkdir -p -m 755 a", op: OpWrite, want: []string{"a"}},
		{src: "sed -i.bak -e s/a/b/ f g", op: OpWrite, want: []string{"f", "g"}},
		{src: "sed -Ei 's/a/b/' f", op: OpWrite, want: []string{"f"}},
		{src: "truncate -s 0 f", op: OpWrite, want: []string{"f"}},
		{src: "dd if=a of=b", op: OpWrite, want: []string{"b"}},
		{src: "sort -o out in", op: OpWrite, want: []string{"out"}},
		{src: "git diff --output=o", op: OpWrite, want: []string{"o"}},
		{src: "chmod 755 f", op: OpWrite, want: []string{"f"}},
		{src: "cd a && cd b && echo x > f", op: OpWrite, want: []string{"a/b/f"}},
		{src: "cd a; echo x > f", op: OpWrite, want: []string{"a/f", "f"}},
		{src: "(cd a) && echo x > f", op: OpWrite, want: []string{"f"}},
		{src: "cd /etc && echo x > f", op: OpWrite, want: []string{"/etc/f"}},
		{src: "cd && echo x > f", op: OpWrite, want: []string{"~/f"}},
		{src: "echo x > $HOME/.bashrc", op: OpWrite, want: []string{"~/.bashrc"}},
		{src: "env -C sub touch f", op: OpWrite, want: []string{"sub/f"}},
		{src: "curl -o f url", op: OpWrite, want: []string{"f"}},
		{src: "/usr/bin/time -o t ls", op: OpWrite, want: []string{"t"}},
		{src: "find d -delete", op: OpDelete, want: []string{"d"}},
	}
	for _, c := range cases {
		a := Analyze(c.src)
		got := targets(a, c.op)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %s targets %q, want %q", c.src, c.op, got, c.want)
		}
		if c.wantRO != a.ReadOnly() {
			t.Errorf("%q: read-only %v, want %v", c.src, a.ReadOnly(), c.wantRO)
		}
	}
	for _, src := range []string{"echo x > $f", "cd $d && echo x > f", "echo x > *.txt", "touch .{g,}it/x", "cd - && echo x > f"} {
		a := Analyze(src)
		dyn := false
		for _, tg := range a.Targets {
			dyn = dyn || tg.Dynamic
		}
		if !dyn {
			t.Errorf("%q: targets %+v not marked dynamic", src, a.Targets)
		}
	}
}

func TestReadOnlyClassifier(t *testing.T) {
	t.Parallel()
	ro := []string{
		"ls -la", "cat a | grep x | wc -l", "git status", "git log --oneline -5", "git diff HEAD~1", "git show x",
		"git branch", "git branch -a -v", "git branch --list 'f*'", "git rev-parse HEAD", "git ls-files", "git blame f",
		"git grep x", "git -C sub status", "git remote -v", "git config --get user.name",
		"git stash list", "git tag", "sed -n '1,5p' f", "sed 's/a/b/g' f", "sed -e '/x/d' -e 's/a/b/2' f",
		"find . -name '*.go' -type f", "sort -u f", "awk '{print $1}' f", "rg foo", "rg --pre-glob '*.x' foo",
		"head -n 5 f && tail f", "echo hi", "printf '%s' x", "diff a b", "jq . f", "go version", "go env GOPATH",
		"cd src && ls", "true", "uniq f", "date", "xxd f", "tree -L 2", "fd x",
	}
	for _, src := range ro {
		if a := Analyze(src); !a.ReadOnly() {
			t.Errorf("%q: not read-only: %+v unprovable %q", src, a.Commands, a.Unprovable)
		}
	}
	notRO := []string{
		"sed -n '1w f' x", "sed -e 'e id' x", "sed 's/a/b/w f' x", "sed 's/a/b/e' x", "sed -f script x", "sed -i s/a/b/ f",
		"sed 'b x; w f' y", "find . -delete", "find . -exec id \\;", "find . -execdir id \\;", "find . -ok id \\;",
		"find . -fprint f", "find . -fprintf f %p", "find . -fls f", "sort -o f x", "sort --output=f x",
		"sort --compress-program=x f", "git diff --output=f", "git -c core.pager=x log", "git diff --ext-diff",
		"rg --pre x foo", "rg --pre=x foo", "awk '{system(\"x\")}'", "awk '{print > \"f\"}'", "awk '{print | \"sh\"}'",
		"awk -f prog f", "git commit -m x", "git push", "git reset --hard", "git checkout x", "git branch new",
		"git branch -d x", "git tag v1", "git config user.name x", "git stash", "git apply p", "echo x > f",
		"LD_PRELOAD=x ls", "PAGER=x git log", "GIT_EXTERNAL_DIFF=x git diff", "export BASH_ENV=x", "./cat f",
		"sudo ls", "uniq a b", "xxd a b", "tree -o f", "date -s now", "go env -w X=1", "go build", "make",
		"python3 -c 'print(1)'", "tee f", "fd -x rm", "hostname evil", "dir/ls",
	}
	for _, src := range notRO {
		if a := Analyze(src); a.ReadOnly() {
			t.Errorf("%q: read-only", src)
		}
	}
}

func TestDestructiveGit(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"git reset --hard": true, "git -C x reset --hard HEAD": true, "git clean -fd": true, "git clean -n": false,
		"git clean --force": true, "git push --force": true, "git push -f origin x": true, "git push origin +x": true,
		"git push --force-with-lease": true, "git -c a.b=c push -f": true, "git branch -D x": true,
		"git branch -d x": false, "git branch -d -f x": true, "git push origin main": false, "git reset HEAD f": false,
		"git checkout -f": true, "git stash drop": true, "git reflog expire --all": true, "git status": false,
		"git reset --har": true, "git clean --forc": true, "git push --mirr": true, "git push -fq": true,
		"git branch -qD x": true, "git checkout --forc x": true, "git push --force-w": true,
	} {
		a := Analyze(src)
		got := Destructive(a.Commands[0]) != ""
		if got != want {
			t.Errorf("%q: destructive %v, want %v", src, got, want)
		}
	}
}

func TestStringNormalises(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		`git   commit  -m "a b"`: `git commit -m 'a b'`,
		`ls 'x'`:                 `ls x`,
		`echo "it's"`:            `echo 'it'\''s'`,
		`rm ""`:                  `rm ''`,
	} {
		a := Analyze(src)
		if got := a.Commands[0].String(); got != want {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"git status && rm -rf build", "echo $(a `b` <(c))", "bash -c 'x'", "a=rm; $a",
		"cd .git && echo > x", "sed -i 's/a/b/w f' x", "find . -exec rm {} +", "env -S 'a b' c", "xargs -I{} a {}",
		"flock l -c 'x'", "cat <<EOF\n$(x)\nEOF", "$'\\x'", "for ((i=0;i<$(x);i++)); do :; done", "a[$(x)]=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := Analyze(s)
		_ = a.ReadOnly()
		for _, c := range a.Commands {
			_ = c.String()
			_ = Destructive(c)
		}
	})
}

func BenchmarkAnalyzeCompound(b *testing.B) {
	for b.Loop() {
		Analyze("git status && go test ./... | tee out.log")
	}
}
