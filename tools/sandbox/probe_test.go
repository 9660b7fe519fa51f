//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBwrap puts a bwrap made of script first in PATH.
func fakeBwrap(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
}

// TestProbeExplainsAndFallsBack: a bwrap that is missing, or that exists
// but cannot create namespaces (Ubuntu's AppArmor restriction, a kernel
// without unprivileged user namespaces), is reported with why, in bwrap's
// own words, and Landlock (or nothing) is used instead; a bwrap without
// --disable-userns (before 0.8.0) is used without it.
func TestProbeExplainsAndFallsBack(t *testing.T) {
	fallback := KindNone
	if _, err := landlockABI(); err == nil {
		fallback = KindLandlock
	}
	cases := []struct {
		name, script string
		want         Kind
		reason       []string
	}{
		{"apparmor", "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1", fallback,
			[]string{"bubblewrap cannot create its namespaces", "setting up uid map: Permission denied", "apparmor_restrict_unprivileged_userns"}},
		{"no userns", "echo 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2; exit 1", fallback,
			[]string{"No permissions to creating new namespace"}},
		{"crashes", "exit 3", fallback, []string{"bubblewrap cannot create its namespaces"}},
	}
	if fallback == KindLandlock {
		cases[0].reason = append(cases[0].reason, "Landlock ABI", "confines writes only")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeBwrap(t, c.script)
			st := probe()
			if st.Kind != c.want || st.Full {
				t.Errorf("kind %s full %v, want %s: %s", st.Kind, st.Full, c.want, st.Reason)
			}
			for _, r := range c.reason {
				if !strings.Contains(st.Reason, r) {
					t.Errorf("reason lacks %q: %s", r, st.Reason)
				}
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		if st := probe(); st.Kind != fallback || !strings.Contains(st.Reason, "bubblewrap (bwrap) is not installed") {
			t.Errorf("%+v", st)
		}
	})
	t.Run("old bwrap", func(t *testing.T) {
		requireKind(t, KindBubblewrap)
		fakeBwrap(t, `for a in "$@"; do [ "$a" = --disable-userns ] && { echo "bwrap: Unknown option --disable-userns" >&2; exit 1; }; done
exec /usr/bin/bwrap "$@"`)
		st := probe()
		if st.Kind != KindBubblewrap || !st.Full || st.disableUserns {
			t.Errorf("%+v", st)
		}
	})
	t.Run("works", func(t *testing.T) {
		requireKind(t, KindBubblewrap)
		st := probe()
		if st.Kind != KindBubblewrap || !st.Full || !strings.Contains(st.Reason, "bubblewrap") || st.BwrapVersion == "" {
			t.Errorf("%+v", st)
		}
	})
}
