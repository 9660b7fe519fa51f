package codex

import (
	"testing"
)

// The override names the workspace and every directory above it, each
// path a quoted TOML key whatever it holds, so that Codex trusts none.
func TestUntrustArgs(t *testing.T) {
	got := untrustArgs("/work/my.repo/sub dir")
	want := []string{"-c", `projects={"/work/my.repo/sub dir"={trust_level="untrusted"},"/work/my.repo"={trust_level="untrusted"},` +
		`"/work"={trust_level="untrusted"},"/"={trust_level="untrusted"}}`}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("untrustArgs = %q\nwant %q", got, want)
	}
	for in, want := range map[string]string{`a"b`: `"a\"b"`, `a\b`: `"a\\b"`, "a\nb": `"a\u000Ab"`, "é": `"é"`} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
}
