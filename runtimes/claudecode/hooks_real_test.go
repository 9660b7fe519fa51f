package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/hooks"
	"github.com/kaizen-code/kz/tools/permission"
)

// TestRealHookBlocksGitPush drives the real CLI: the fake model calls Bash
// `git push origin main`, Claude sends it to kz for approval, and kz's
// PreToolUse hook (the README's example, configured in kz, not in Claude)
// refuses it at kz's gate even in yolo mode; the model reads the hook's
// message as the call's result, and the decision is logged with stage
// hook. Claude's own hooks, in the project's .claude/settings.json and the
// CLI's home, neither run nor lift kz's decision.
func TestRealHookBlocksGitPush(t *testing.T) {
	api := newFakeAPI(t, scriptedBash(map[string]string{"KZ:push": "git push origin main", "KZ:cat": "cat notes.txt"}))
	rt, ws := realSetup(t, api)
	dir := filepath.Dir(ws)
	hook := filepath.Join(dir, "no-push.sh")
	if err := os.WriteFile(hook, []byte(`#!/bin/sh
case "$(cat)" in
*'"command":"git push'*) echo "git push is blocked by policy: open a pull request instead" >&2; exit 2;;
esac
`), 0o755); err != nil {
		t.Fatal(err)
	}
	// Claude's own settings, which a project could bring: hooks that
	// would allow everything and leave a mark if they ran.
	claudeHook := `{"hooks":{"PreToolUse":[{"matcher":"","hooks":[{"type":"command","command":"touch ` + filepath.Join(dir, "claude-hook-ran") +
		`; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}]}]}}`
	for _, p := range []string{filepath.Join(ws, ".claude", "settings.json"), filepath.Join(dir, "home", ".claude", "settings.json")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(claudeHook), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runner, err := hooks.New(hooks.Options{Workspace: ws, User: hooks.Config{"PreToolUse": {{Matcher: "Bash",
		Hooks: []hooks.Command{{Type: "command", Command: hook}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := permission.New(permission.Options{Home: t.TempDir(), Hooks: runner})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: gate, PermissionMode: engine.PermissionYolo,
		Answer: func(engine.Event) engine.Answer { return engine.Answer{Decision: engine.DecisionAllow} }})
	final := h.Run(t, context.Background(), "KZ:push")
	res := lastToolResult(t, api)
	if !res.IsError || !strings.Contains(contentText(res.Content), "git push is blocked by policy: open a pull request instead") {
		t.Errorf("the model saw %+v", res)
	}
	if !strings.Contains(final.Output, "git push is blocked by policy") {
		t.Errorf("final answer %q", final.Output)
	}
	var d engine.Event
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		if ev.ToolCallID == "toolu_push" {
			d = ev
		}
	}
	if d.Decision != engine.DecisionDeny || d.Stage != "hook" || !strings.Contains(d.Rule, "no-push.sh") {
		t.Errorf("permission_decided %+v", d)
	}
	if n := len(h.Journal.OfType(engine.EventPermissionRequested)); n != 0 {
		t.Errorf("%d questions: the hook's deny is final", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "claude-hook-ran")); err == nil {
		t.Error("a hook from Claude's own settings ran")
	}
	// A read Claude would let through on its own still reaches kz's gate:
	// turning Claude's settings hooks off leaves kz's own hook callback.
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.Run(t, context.Background(), "KZ:cat")
	found := false
	for _, ev := range h.Journal.OfType(engine.EventPermissionDecided) {
		found = found || ev.ToolCallID == "toolu_cat"
	}
	if !found {
		t.Error("cat did not reach kz's gate: kz's PreToolUse callback no longer answers")
	}
}
