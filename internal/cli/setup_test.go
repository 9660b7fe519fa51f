package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/tui"
)

// TestAfterSetupReopensOnTheNewRuntime: the session after the setup runs
// on the runtime it wrote, whatever --runtime and --model said, and
// continues the session only when it had turns; other flags stay.
func TestAfterSetupReopensOnTheNewRuntime(t *testing.T) {
	done := &tui.SetupDone{Result: tui.SetupResult{Runtime: "anthropic", Model: "claude-sonnet-4-5", ConfigPath: "/c/config.toml"}}
	cases := []struct {
		args []string
		id   string
		want []string
	}{
		{nil, "", []string{"--runtime", "anthropic"}},
		{[]string{"--runtime", "claude", "--model=x", "--theme", "light"}, "", []string{"--theme", "light", "--runtime", "anthropic"}},
		{[]string{"--continue", "-runtime=codex", "--data-dir", "/d"}, "s1", []string{"--data-dir", "/d", "--runtime", "anthropic", "--resume", "s1"}},
		{[]string{"--resume", "old", "--mode", "analysis-only"}, "old", []string{"--mode", "analysis-only", "--runtime", "anthropic", "--resume", "old"}},
	}
	for _, c := range cases {
		done.SessionID = c.id
		if got := afterSetup(c.args, done); !slices.Equal(got, c.want) {
			t.Errorf("afterSetup(%q) = %q, want %q", c.args, got, c.want)
		}
		if _, err := parseRoot(afterSetup(c.args, done)); err != nil {
			t.Errorf("afterSetup(%q) does not parse: %v", c.args, err)
		}
	}
	done.Result.KeyPath = "/c/keys/anthropic.key"
	note := setupNote(done)
	for _, w := range []string{"runtime anthropic (claude-sonnet-4-5)", "/c/config.toml", "/c/keys/anthropic.key (mode 0600)"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q lacks %q", note, w)
		}
	}
}

// TestSetupCommandIsInteractive: kz setup refuses -p and --demo, and
// stray arguments, as usage errors.
func TestSetupCommandIsInteractive(t *testing.T) {
	sb := newSandbox(t)
	for _, args := range [][]string{{"setup", "-p", "hi"}, {"setup", "--demo"}, {"setup", "extra"}} {
		_, errOut, code := sb.kz(args...)
		if code != 2 || errOut == "" {
			t.Errorf("kz %q: exit %d, stderr %q", args, code, errOut)
		}
	}
}
