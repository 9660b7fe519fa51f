package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// permissionScript asks before a shell command; the answer picks the
// branch the runtime plays.
const permissionScript = `{"type":"text_delta","text":"Cleaning up.\n"}
{"type":"tool_call_started","tool_call_id":"t1","tool":"bash","input":{"command":"rm -rf build"}}
{"type":"permission_requested","tool":"bash","command":"rm -rf build","tool_call_id":"t1"}
{"type":"tool_call_finished","tool_call_id":"t1","tool":"bash","output":"removed build","when":"allow"}
{"type":"text_delta","text":"All clean.\n","when":"allow"}
{"type":"tool_call_finished","tool_call_id":"t1","tool":"bash","is_error":true,"output":"denied","when":"deny"}
{"type":"text_delta","text":"Left it alone.\n","when":"deny"}
`

func TestRealSessionPermissionAllowThenDeny(t *testing.T) {
	sess, sub := realSession(t, permissionScript)
	m := testModel(t, sess, 100, 30)

	m.typeText("clean up")
	m.press("enter")
	pumpUntil(t, m, sub, "the permission dialog", func(s string) bool { return strings.Contains(s, "Permission needed: bash") })
	if ids := sess.Pending(); len(ids) != 1 || ids[0] != m.dialog.current().RequestID {
		t.Fatalf("pending %v, dialog shows %s", ids, m.dialog.current().RequestID)
	}
	m.press("y")
	pumpUntil(t, m, sub, "the allowed branch", func(s string) bool { return strings.Contains(s, "All clean.") && !m.status.running })
	if s := m.screen(); !strings.Contains(s, "✓ Bash rm -rf build") || !strings.Contains(s, "│ ✓ allowed") {
		t.Fatalf("allowed tool call not shown:\n%s", s)
	}

	m.typeText("again")
	m.press("enter")
	pumpUntil(t, m, sub, "the second dialog", func(s string) bool { return m.dialog.active() })
	m.press("m")
	m.typeText("use make clean")
	m.press("enter")
	pumpUntil(t, m, sub, "the denied branch", func(s string) bool { return strings.Contains(s, "Left it alone.") && !m.status.running })
	if s := m.screen(); !strings.Contains(s, "✗ Bash rm -rf build") || !strings.Contains(s, "│ ✗ denied — “use make clean”") {
		t.Fatalf("denial not shown:\n%s", s)
	}

	// The session's transcript recorded both decisions in order.
	var decisions []string
	for _, e := range sess.Transcript() {
		if e.Kind == engine.EntryDecision {
			decisions = append(decisions, e.Status+":"+e.Text)
		}
	}
	if len(decisions) != 2 || !strings.HasPrefix(decisions[0], "allow") || decisions[1] != "deny:use make clean" {
		t.Fatalf("decisions = %q", decisions)
	}
}

func TestRealSessionRuntimeSwitchAndModeRefusal(t *testing.T) {
	lite, err := scripted.Parse("lite", "lite.jsonl", strings.NewReader(`{"kz_script":1,"capabilities":["text_completion"]}
{"type":"text_delta","text":"lite here\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	sess, sub := realSession(t, `{"type":"text_delta","text":"hi\n"}`, engine.RuntimeEntry{Runtime: lite, Models: []string{"l1"}})
	m := testModel(t, sess, 120, 30)

	// lite cannot serve full-autonomous: the picker says so and the
	// switch is refused with the capability message.
	m.press("ctrl+r", "down", "enter")
	if s := m.screen(); !strings.Contains(s, "mode full-autonomous needs") || sess.State().Runtime != "scripted" {
		t.Fatalf("switch not refused:\n%s", s)
	}
	m.press("esc", "shift+tab")
	pumpUntil(t, m, sub, "the mode divider", func(s string) bool { return strings.Contains(s, "mode full-autonomous → patch-proposal") })
	m.press("ctrl+r", "down", "enter")
	pumpUntil(t, m, sub, "the runtime divider", func(s string) bool { return strings.Contains(s, "runtime scripted/m → lite/l1 (user)") })
	if st := sess.State(); st.Runtime != "lite" || !strings.Contains(m.screen(), "lite/l1 │ patch-proposal") {
		t.Fatalf("state %+v, screen:\n%s", st, m.screen())
	}
	m.press("shift+tab", "shift+tab")
	pumpUntil(t, m, sub, "the analysis-only divider", func(s string) bool { return strings.Contains(s, "→ analysis-only") })
	if s := m.screen(); !strings.Contains(s, "mode full-autonomous refused: mode full-autonomous needs") {
		t.Fatalf("refusal not shown:\n%s", s)
	}
	m.typeText("hello")
	m.press("enter")
	pumpUntil(t, m, sub, "lite's answer", func(s string) bool { return strings.Contains(s, "lite here") && !m.status.running })
}

func TestRunWithoutSessionFails(t *testing.T) {
	if err := Run(context.Background(), Options{}); err == nil {
		t.Fatal("Run without a session succeeded")
	}
}
