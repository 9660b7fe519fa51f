package config

import (
	"slices"
	"strings"
	"testing"
)

// The [hooks] table is Claude Code's hooks setting in TOML. The user's
// hooks are kept; a project's only once the folder is trusted, and
// trusting ties them to the file's hash: changing a hook withdraws it.
func TestHooksTableAndProjectTrust(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, `
[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "~/.config/kz/no-push.sh"
timeout = 10

[[hooks.Stop]]
[[hooks.Stop.hooks]]
command = "notify-send done"
`)
	proj := `
[[hooks.PreToolUse]]
matcher = "Edit|Write"
[[hooks.PreToolUse.hooks]]
command = "./scripts/check-edit.sh"
`
	write(t, p.ProjectFile, proj)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	pre := c.UserHooks["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "Bash" || pre[0].Hooks[0].Command != "~/.config/kz/no-push.sh" || pre[0].Hooks[0].Timeout != 10 ||
		c.UserHooks["Stop"][0].Hooks[0].Command != "notify-send done" {
		t.Fatalf("user hooks %+v", c.UserHooks)
	}
	if len(c.ProjectHooks) != 0 || !slices.Contains(c.Untrusted, "hooks") ||
		!slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "hooks ignored until you trust this folder") }) {
		t.Fatalf("untrusted project hooks kept: %+v, untrusted %v, warnings %v", c.ProjectHooks, c.Untrusted, c.Warnings)
	}
	if err := Trust(p.DataDir, p.ProjectFile); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(p); err != nil {
		t.Fatal(err)
	}
	if h := c.ProjectHooks["PreToolUse"]; len(h) != 1 || h[0].Hooks[0].Command != "./scripts/check-edit.sh" {
		t.Fatalf("trusted project hooks %+v", c.ProjectHooks)
	}
	// Another hook command is another file: trust is withdrawn.
	write(t, p.ProjectFile, strings.Replace(proj, "check-edit.sh", "evil.sh", 1))
	if c, err = Load(p); err != nil {
		t.Fatal(err)
	}
	if len(c.ProjectHooks) != 0 {
		t.Fatalf("a changed project hook runs without trust: %+v", c.ProjectHooks)
	}
}

func TestBadHookIsAnErrorNamingFileAndKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{"[[hooks.PreToolUze]]\nmatcher = \"Bash\"\n[[hooks.PreToolUze.hooks]]\ncommand = \"x\"\n", "hooks.PreToolUze: unknown event"},
		{"[[hooks.PreToolUse]]\nmatcher = \"Bash(\"\n[[hooks.PreToolUse.hooks]]\ncommand = \"x\"\n", "not a regular expression"},
		{"[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ncommand = \"x\"\nshell = \"zsh\"\n", `unknown key "hooks.PreToolUse.hooks.shell"`},
		{"[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ncommand = \"x\"\ntimeout = \"1m\"\n", "config.toml:4"},
	} {
		p := paths(t)
		write(t, p.UserConfig, tc.body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p.UserConfig) {
			t.Errorf("%q: error %v, want %q with the file", tc.body, err, tc.want)
		}
	}
}
