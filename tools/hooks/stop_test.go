package hooks

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// Stop reads every Stop hook's answer the way Claude Code does: exit 2
// and "decision": "block" block (their reasons joined), "continue": false
// lets the turn end whatever the others said, and a hook that fails is a
// problem that blocks nothing.
func TestStopVerdicts(t *testing.T) {
	t.Parallel()
	block := `echo '{"decision":"block","reason":"lint first"}'`
	for _, tc := range []struct {
		name     string
		cmds     []string
		block    bool
		reason   []string
		problems int
	}{
		{name: "none says anything", cmds: []string{"true", "echo plain text"}},
		{name: "decision block", cmds: []string{block}, block: true, reason: []string{"lint first"}},
		{name: "exit 2 with stderr", cmds: []string{"echo tests fail >&2; exit 2"}, block: true, reason: []string{"tests fail"}},
		{name: "two blocks join", cmds: []string{block, "echo tests fail >&2; exit 2"}, block: true, reason: []string{"lint first", "tests fail"}},
		{name: "continue false wins", cmds: []string{block, `echo '{"continue":false,"stopReason":"enough"}'`}},
		{name: "a failing hook blocks nothing", cmds: []string{"exit 1", `echo '{"decision":'`}, problems: 2},
		{name: "a block beside a failure", cmds: []string{"exit 3", block}, block: true, reason: []string{"lint first"}, problems: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ms []Command
			for _, c := range tc.cmds {
				ms = append(ms, Command{Command: c})
			}
			r, err := New(Options{Workspace: t.TempDir(), User: Config{"Stop": {{Hooks: ms}}}})
			if err != nil {
				t.Fatal(err)
			}
			v := r.Stop(context.Background(), engine.StopQuery{SessionID: "s1", Active: true})
			if v.Block != tc.block || len(v.Problems) != tc.problems {
				t.Fatalf("verdict %+v", v)
			}
			if got := strings.Split(v.Reason, "\n\n"); tc.block && strings.Join(got, "|") != strings.Join(tc.reason, "|") {
				t.Errorf("reason %q, want %q", got, tc.reason)
			}
		})
	}
}

// Without Stop hooks nothing runs and nothing blocks, also on a nil
// runner.
func TestStopWithoutHooks(t *testing.T) {
	t.Parallel()
	var r *Runner
	if v := r.Stop(context.Background(), engine.StopQuery{}); v.Block || len(v.Problems) != 0 {
		t.Errorf("verdict %+v", v)
	}
}
