package shell

import (
	"slices"
	"strings"
	"testing"
)

// The analysis side of issue 15's adversarial classes: what the analysis
// must report for each attack (the gate-level decisions are in
// tools/permission/adversarial_test.go). Every case is also never proven
// read-only.

// hasTarget reports a target with the path and op.
func hasTarget(a *Analysis, p string, op Op) bool {
	for _, t := range a.Targets {
		if t.Path == p && t.Op == op {
			return true
		}
	}
	return false
}

func TestAdversarialOptionModels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		path string // a target the analysis must see
		op   Op
	}{
		{"sort --outp=o f", "o", OpWrite},
		{"sort --ou o f", "o", OpWrite},
		{"sort -rno o f", "o", OpWrite},
		{"sort f -o o", "o", OpWrite},
		{"sort -oo f", "o", OpWrite},
		{"sed --expr='1w o' f", "o", OpWrite},
		{"sed --in-pl s/a/b/ f", "f", OpWrite},
		{"sed -ni.bak p f", "f", OpWrite},
		{"sed -s -i -- s/a/b/ f", "f", OpWrite},
		{"env -iC.git touch config", ".git/config", OpWrite},
		{"env --ch=.git touch config", ".git/config", OpWrite},
		{"env -iS'touch o'", "o", OpWrite},
		{"cp --tar=d x", "d/x", OpWrite},
		{"cp --target d x", "d/x", OpWrite},
		{"mv -ft d x", "x", OpDelete},
		{"xxd -r -p in o", "o", OpWrite},
		{"head -5c .env", ".env", OpRead},
		{"tail -fn5 .env", ".env", OpRead},
		{"du --files0-fr=l", "l", OpRead},
		{"grep -f.env x f", ".env", OpRead},
		{"date --fil=.env", ".env", OpRead},
		{"tree -oL o 2", "o", OpWrite},
		{"timeout --kill 1 5 touch o", "o", OpWrite},
		{"flock --comm 'touch o' lock", "o", OpWrite},
		{"find . -fprint o", "o", OpWrite},
		{"uniq in o", "o", OpWrite},
	}
	for _, c := range cases {
		a := Analyze(c.src)
		if !hasTarget(a, c.path, c.op) {
			t.Errorf("%q: no %s target %s in %+v (unprovable %q)", c.src, c.op, c.path, a.Targets, a.Unprovable)
		}
		if a.ReadOnly() && c.op != OpRead {
			t.Errorf("%q: read-only", c.src)
		}
	}
	// Options the models do not know, in any spelling, are never proven.
	for _, src := range []string{"cat -Q f", "ls --hid=x", "cat --frobnicate f", "sort $o f", "git log --onel",
		"find . -frobnicate", "grep --fil=x y f", "cp --re a b", "rg --pre-gl=x y", "head --lx=3 f",
		"ps --frob", "jq --frob .", "xxd -Z f", "wc -Z f", "git status --frob", "env --frob ls",
		"tree --frob", "fd --frob"} {
		if a := Analyze(src); a.ReadOnly() {
			t.Errorf("%q: read-only despite an unknown option", src)
		}
	}
}

func TestAdversarialInertSyntax(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"[[ 'a[$(touch m)]' -eq 1 ]]", "[[ -v 'a[$(touch m)]' ]]", "[[ 1 -lt 'b[`touch m`]' ]]",
		"[[ -R 'a[$(touch m)]' ]]", "[[ x -ge 'a[i]' ]]", "test -v 'a[$(touch m)]'", "[ -v 'a[$(touch m)]' ]",
		"[ -R 'x[1]' ]", "wait -n -p 'a[$(touch m)]'", "printf -v 'a[$(touch m)]' %s y",
		"printf -v \"$v\" %s y", "read -a 'a[$(touch m)]'", "read 'a[$(touch m)]'",
		"mapfile -C 'touch m' -c 1 arr", "readarray -t 'a[$(touch m)]'", "declare -n r='a[$(touch m)]'",
		"x='a[$(touch m)]'; echo ${!x}", "let 'y=a[$(touch m)]'", "unset 'a[$(touch m)]'",
		"getopts ab 'a[$(touch m)]'", "read x; [[ $x -eq 1 ]]", "declare -i n; n='a[$(touch m)]'",
		"test -v \"$v\"", "x=$(cat f); echo $(( x + 1 ))", "builtin let 'y=a[$(touch m)]'",
		"command printf -v 'a[$(touch m)]' x", "local -n r='a[1]'",
	} {
		if a := Analyze(src); a.Provable() {
			t.Errorf("%q: provable (commands %q)", src, names(a))
		}
	}
	// What stays inert.
	for _, src := range []string{"[[ -n $x ]]", "[[ $a == b ]]", "test -f README.md", "[ 1 -eq 1 ]",
		"printf '%s' x", "read -r line < f", "(( 1 + 2 ))"} {
		if a := Analyze(src); !a.Provable() {
			t.Errorf("%q: unprovable %q", src, a.Unprovable)
		}
	}
}

func TestAdversarialUnknownCwd(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"eval 'cd .git'; echo x > config", "eval cd .git && echo x > hooks/pre-commit",
		"f() { cd .git; }; f; echo x > config", "g() { cd \"$1\"; }; g .git; touch config",
		"trap 'cd .git' DEBUG; echo x > config", "source ./x.sh; echo x > config", ". ./x; echo x > HEAD",
		"pushd +1; echo x > config", "pushd; echo x > config", "popd; echo x > config",
		"cd .git; cd src; cd -; echo x > config", "find . -execdir sh -c 'echo x > config' \\;",
		"for i in 1 2; do echo x > config; cd .git; done", "while true; do cd .git; break; done; echo x > config",
		"alias go='cd .git'; go; echo x > config", "f() { echo x > config; }; cd .git; f",
		"trap 'echo x > config' EXIT", "command eval 'cd .git' && echo x > config", "pushd -0 && echo x > index",
		"CDPATH=.git; cd hooks; echo x > pre-commit", "until false; do cd .git; done; touch config",
		"find . -okdir touch config \\;",
	} {
		a := Analyze(src)
		found := false
		for _, t := range a.Targets {
			found = found || t.UnknownCwd && t.Op == OpWrite && t.Dynamic
		}
		if !found {
			t.Errorf("%q: no write under an unknown cwd in %+v", src, a.Targets)
		}
	}
	// Followed directory changes stay precise.
	for src, want := range map[string]string{
		"cd .git && echo x > config": ".git/config", "pushd .git && echo x > config": ".git/config",
		"env -C .git touch config": ".git/config", "(cd src); echo x > config": "config",
	} {
		if a := Analyze(src); !hasTarget(a, want, OpWrite) {
			t.Errorf("%q: no write to %s in %+v", src, want, a.Targets)
		}
	}
}

func TestAdversarialSecretReads(t *testing.T) {
	t.Parallel()
	secrets := []string{"env", "env -0", "env -u HOME", "printenv", "printenv ANTHROPIC_API_KEY", "ps eww",
		"ps auxe", "ps -o pid,environ", "ps e", "awk '{print ENVIRON[\"HOME\"]}' f", "jq -n env",
		"jq -n '$ENV.HOME'", "echo $ANTHROPIC_API_KEY", "echo \"${GITHUB_TOKEN}\"", "export -p", "declare -p",
		"export", "set", "typeset -p", "git config --list", "git config --get http.extraheader",
		"x=ANTHROPIC_API_KEY; echo ${!x}"}
	for _, src := range secrets {
		if a := Analyze(src); len(a.Secrets) == 0 {
			t.Errorf("%q: no secret read reported", src)
		}
	}
	reads := map[string]string{
		"sed 'r .env' f": ".env", "sed '1R .env' f": ".env", "sed -e '$r .env' f": ".env",
		"awk 'BEGIN{while((getline l < \".env\")>0) print l}'": ".env", "date -f .env": ".env",
		"date --fil=.env": ".env", "cat $'.env'": ".env", "git show HEAD:.env": ".env",
		"git cat-file -p HEAD:.env": ".env", "git log -p -- .env": ".env", "git show :0:.env": ".env",
		"diff .env f": ".env", "base64 .env": ".env", "xxd .env": ".env", "od -c k.pem": "k.pem",
		"cat /proc/self/environ": "/proc/self/environ", "tr a b < /proc/1/environ": "/proc/1/environ",
		"cp .env /tmp/x": ".env", "jq --rawfile s .env -n '$s'": ".env", "git diff --no-index .env f": ".env",
		". ./.env": "./.env", "source .env": ".env", "dd if=.env": ".env",
	}
	for src, p := range reads {
		if a := Analyze(src); !hasTarget(a, p, OpRead) {
			t.Errorf("%q: no read of %s in %+v", src, p, a.Targets)
		}
	}
	for _, src := range []string{"cat .e*", "cat .[e]nv", "cat .env?", "cat {.env,x}"} {
		a := Analyze(src)
		if len(a.Targets) != 1 || !a.Targets[0].Glob || a.Targets[0].Op != OpRead {
			t.Errorf("%q: want one glob read, got %+v", src, a.Targets)
		}
	}
}

func TestAdversarialReadsAsArguments(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"cat ../x": "../x", "cat /etc/passwd": "/etc/passwd", "cat ~/.x": "~/.x", "head -n1 a b": "b",
		"wc -l /etc/hosts": "/etc/hosts", "grep root /etc/passwd": "/etc/passwd", "grep -e x -- -f": "-f",
		"diff a /etc/hosts": "/etc/hosts", "ls ~": "~", "find / -name x": "/", "sort -m ../x a": "../x",
		"jq . ../x": "../x", "tail -f /var/log/syslog": "/var/log/syslog", "stat /etc/shadow": "/etc/shadow",
		"awk '{print}' ../x": "../x", "sed -n p /etc/hosts": "/etc/hosts", "cut -d: -f1 /etc/passwd": "/etc/passwd",
		"cd /etc && cat passwd": "/etc/passwd", "git blame ../x": "../x", "rg x /etc": "/etc",
	} {
		if a := Analyze(src); !hasTarget(a, want, OpRead) {
			t.Errorf("%q: no read of %s in %+v", src, want, a.Targets)
		}
	}
	// Patterns, scripts and filters are not files.
	for src, not := range map[string]string{"grep /etc/passwd f": "/etc/passwd", "sed s/a/b/ f": "s/a/b/",
		"awk '{print}' f": "{print}", "jq .a f": ".a", "rg /etc f": "/etc", "fd /etc": "/etc",
		"awk '{print}' x=1 f": "x=1"} {
		if a := Analyze(src); hasTarget(a, not, OpRead) {
			t.Errorf("%q: %s taken for a file", src, not)
		}
	}
}

func TestAdversarialGitOtherRepository(t *testing.T) {
	t.Parallel()
	// Global options and variables that point git elsewhere.
	for _, src := range []string{"git --git-dir=b log", "git --git-dir b log", "git --work-tree=.. status",
		"git -c core.fsmonitor=x status", "git -c color.ui=always log", "git --exec-path=. status",
		"git --config-env=core.pager=X log", "git --bare log", "git --namespace=x log", "git --super-prefix=x status",
		"git -c a=b -C x log", "git --attr-source=HEAD diff"} {
		if a := Analyze(src); a.Provable() {
			t.Errorf("%q: provable", src)
		}
	}
	for _, src := range []string{"GIT_DIR=b git log", "GIT_WORK_TREE=/ git status",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log", "export GIT_DIR=x; git log",
		"env GIT_DIR=x git log", "GIT_CONFIG_GLOBAL=x git log"} {
		if a := Analyze(src); len(a.Steering) == 0 {
			t.Errorf("%q: no steering", src)
		}
	}
	// The directories git runs in, for the gate's repository check.
	for src, want := range map[string][]string{
		"git -C vendor/x status": {"vendor/x"}, "cd vendor/x && git status": {"vendor/x"},
		"git -C src -C ../v status": {"src/../v"}, "env -C v git log": {"v"}, "(cd v; git log)": {"v", ""},
		"cd a; git log": {"a", ""},
	} {
		a := Analyze(src)
		var got []string
		for _, c := range a.Commands {
			if c.Name == "git" {
				got = append(got, c.Dirs...)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: git dirs %q, want %q", src, got, want)
		}
	}
	for _, src := range []string{"eval 'cd v'; git status", "git -C \"$d\" status", "f; git log", "pushd +1; git log"} {
		if !strings.HasPrefix(src, "f;") || true {
			a := Analyze("f() { :; }; " + src)
			unknown := false
			for _, c := range a.Commands {
				unknown = unknown || c.Name == "git" && c.DirUnknown
			}
			if !unknown {
				t.Errorf("%q: git's directory is known", src)
			}
		}
	}
}

func TestAdversarialSteeredPrograms(t *testing.T) {
	t.Parallel()
	steered := []string{"RIPGREP_CONFIG_PATH=x rg foo", "LESSOPEN='|id' less f", "PAGER=x git log",
		"MANPAGER=x man ls", "NODE_OPTIONS='--require ./x' node y", "PYTHONSTARTUP=x python3", "BASH_ENV=x bash -c ls",
		"ENV=x sh -c ls", "PROMPT_COMMAND=x bash -i", "PS4='$(id)' bash -xc ls", "AWKPATH=. awk -f x f",
		"LD_PRELOAD=x ls", "TAR_OPTIONS=--to-command=id tar tf a.tar", "GREP_OPTIONS=-r grep x",
		"GLIBC_TUNABLES=x ls", "XDG_CONFIG_HOME=. git log", "EXINIT=x vi", "export LESSOPEN='|x'"}
	for _, src := range steered {
		if a := Analyze(src); len(a.Steering) == 0 {
			t.Errorf("%q: no steering", src)
		}
	}
	unprovable := []string{"awk -W exec=x f", "awk --exec=x f", "awk -E x f", "awk '@include \"x\"' f",
		"awk -f x f", "gawk -l x 'BEGIN{}'", "awk -i x 'BEGIN{}'", "rg --pre=./x foo", "rg --pre ./x foo",
		"rg --search-zip foo", "rg -z foo", "rg --hostname-bin=./x foo", "sort --compress-program=x f",
		"fd -x rm", "fd -X rm", "git diff --ext-diff", "git grep -O x", "awk '{print | \"sh\"}' f",
		"awk '{system(\"id\")}' f", "awk '\"id\" | getline x' f", "jq -f prog f", "mapfile -C x arr"}
	for _, src := range unprovable {
		if a := Analyze(src); a.Provable() {
			t.Errorf("%q: provable", src)
		}
	}
	notRO := []string{"xargs -a list grep x", "cat list | xargs grep x", "xargs grep x < list",
		"find . -name '*.md' | xargs wc -l", "rg --ignore-file=x foo", "npm test", "npm run lint", "yarn build",
		"pnpm test", "make", "make -n", "cargo build", "go test ./...", "go generate ./...", "npm ls",
		"git help log", "git --help"}
	for _, src := range notRO {
		if a := Analyze(src); a.ReadOnly() {
			t.Errorf("%q: read-only", src)
		}
	}
}
