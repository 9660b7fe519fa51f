package cli

import (
	"io"
	"testing"
)

// kz -p runs one message and ends, so its session stops the agent CLI as
// soon as the turn is done with it; the TUI's session goes on and keeps
// its CLI between turns.
func TestOnlyPrintModeIsOneShot(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		oneShot bool
	}{
		{[]string{"-p", "hello"}, true},
		{[]string{"-p", "hello", "--runtime", "claude"}, true},
		{nil, false},
		{[]string{"--runtime", "claude"}, false},
	} {
		f, err := parseRoot(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		o, err := f.options(io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.OneShot != tc.oneShot || o.Interactive == tc.oneShot {
			t.Errorf("%v: OneShot %v Interactive %v, want OneShot %v and the opposite", tc.args, o.OneShot, o.Interactive, tc.oneShot)
		}
	}
}
