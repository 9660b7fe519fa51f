package childenv

import (
	"slices"
	"strings"
	"testing"
)

// The minimal environment of a command: Base names in kz's order, no name
// that looks like a secret, a secret only when named exactly.
func TestBuildMinimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		environ, pass []string
		want          string
	}{
		{[]string{"HOME=/h", "PATH=/p", "GH_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y", "LANG=C"}, nil, "HOME=/h PATH=/p LANG=C"},
		{[]string{"PATH=/bin", "GITHUB_TOKEN=x", "NPM_TOKEN=y", "HOME=/h"}, []string{"NPM_TOKEN"}, "PATH=/bin NPM_TOKEN=y HOME=/h"},
		{[]string{"USER=u", "LOGNAME=u", "SHELL=/bin/zsh", "LC_ALL=C", "LC_CTYPE=UTF-8", "TZ=UTC", "TERM=xterm", "TMPDIR=/t", "PATH=/p"}, nil,
			"USER=u LOGNAME=u SHELL=/bin/zsh LC_ALL=C LC_CTYPE=UTF-8 TZ=UTC TERM=xterm TMPDIR=/t PATH=/p"},
		// Neither a setting nobody asked for nor a malformed entry passes.
		{[]string{"PATH=/p", "EDITOR=vi", "XDG_CONFIG_HOME=/c", "HTTPS_PROXY=http://p", "=x", "NOEQUALS"}, nil, "PATH=/p"},
		// Passing a name does not pass its look-alikes.
		{[]string{"PATH=/p", "MY_API_KEY=1", "MY_API_KEY_2=2"}, []string{"MY_API_KEY"}, "PATH=/p MY_API_KEY=1"},
		// The last value of a name wins, at the place the name came first.
		{[]string{"HOME=/old", "PATH=/p", "HOME=/new"}, nil, "HOME=/new PATH=/p"},
	} {
		if got := strings.Join(Build(tc.environ, Spec{Pass: tc.pass}), " "); got != tc.want {
			t.Errorf("Build(%q, %q) = %q, want %q", tc.environ, tc.pass, got, tc.want)
		}
	}
}

func TestBuildDefaultPath(t *testing.T) {
	t.Parallel()
	if got := Build([]string{"HOME=/h"}, Spec{}); !slices.Equal(got, []string{"HOME=/h", "PATH=" + DefaultPath}) {
		t.Errorf("without PATH: %q", got)
	}
	if got := Build(nil, Spec{Config: []string{"PATH=/mine"}}); !slices.Equal(got, []string{"PATH=/mine"}) {
		t.Errorf("a configured PATH: %q", got)
	}
}

// An agent CLI's environment: its prefixes pass every setting but the
// secret-looking ones, defaults yield to kz's environment and the
// configuration, and the configuration's entries set or pass through.
func TestBuildCLI(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/p", "HOME=/h", "ANTHROPIC_API_KEY=sk", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
		"ANTHROPIC_OTHER_TOKEN=tok", "CLAUDE_CODE_MAX_RETRIES=5", "CLAUDE_SECRET=s", "GITHUB_TOKEN=gh",
		"AWS_SECRET_ACCESS_KEY=aws", "OTHER=o"}
	s := Spec{
		Pass:     []string{"ANTHROPIC_API_KEY", "NOT_SET"},
		Prefixes: []string{"ANTHROPIC_", "CLAUDE_"},
		Defaults: []string{"CLAUDE_CODE_MAX_RETRIES=2", "DISABLE_AUTOUPDATER=1", "FROM_CONFIG=default"},
		Config:   []string{"AWS_SECRET_ACCESS_KEY", "MISSING", "FROM_CONFIG=1", "HOME=/cfg", "EXTRA=x=y"},
	}
	got := Build(environ, s)
	want := []string{"PATH=/p", "HOME=/cfg", "ANTHROPIC_API_KEY=sk", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
		"CLAUDE_CODE_MAX_RETRIES=5", "DISABLE_AUTOUPDATER=1", "FROM_CONFIG=1", "AWS_SECRET_ACCESS_KEY=aws", "EXTRA=x=y"}
	if !slices.Equal(got, want) {
		t.Errorf("Build =\n%q\nwant\n%q", got, want)
	}
}

func TestSecret(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "my_token": true, "AWS_SECRET_ACCESS_KEY": true, "DB_PASSWORD": true, "ssh_key": true,
		"PATH": false, "HOME": false, "ANTHROPIC_BASE_URL": false, "PASSWD": false,
	} {
		if Secret(name) != want {
			t.Errorf("Secret(%q) = %v", name, !want)
		}
	}
}

func TestListHelpers(t *testing.T) {
	t.Parallel()
	env := []string{"HOME=/h", "K=old", "K=new", "E="}
	if Lookup(env, "K") != "new" || Lookup(env, "E") != "" || Lookup(env, "NONE") != "" {
		t.Errorf("Lookup: K=%q E=%q", Lookup(env, "K"), Lookup(env, "E"))
	}
	if got := Strip(env, "K", "E"); !slices.Equal(got, []string{"HOME=/h"}) {
		t.Errorf("Strip = %q", got)
	}
	if got := Set(env, "K", "v"); !slices.Equal(got, []string{"HOME=/h", "E=", "K=v"}) {
		t.Errorf("Set = %q", got)
	}
	if got := FromMap(map[string]string{"B": "2", "A": "1"}); !slices.Equal(got, []string{"A=1", "B=2"}) {
		t.Errorf("FromMap = %q", got)
	}
}
