package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func TestBeforePrompt(t *testing.T) {
	ctx := context.Background()
	newRunner := func(c Config) *Runner {
		t.Helper()
		r, err := New(Options{Workspace: t.TempDir(), User: c})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cmd := func(s string) []Matcher { return []Matcher{{Hooks: []Command{{Command: s}}}} }
	for _, tc := range []struct {
		name      string
		c         Config
		start     string
		block     bool
		reason    string
		context   string
		problem   string
		noContext bool
	}{
		{name: "block by exit 2", c: Config{"UserPromptSubmit": cmd("echo no way >&2; exit 2")}, block: true, reason: "no way"},
		{name: "block by decision", c: Config{"UserPromptSubmit": cmd(`echo '{"decision":"block","reason":"not today"}'`)}, block: true, reason: "not today"},
		{name: "continue false", c: Config{"UserPromptSubmit": cmd(`echo '{"continue":false,"stopReason":"halt"}'`)}, block: true, reason: "halt"},
		{name: "plain context", c: Config{"UserPromptSubmit": cmd("echo plain words")}, context: "plain words"},
		{name: "json context", c: Config{"UserPromptSubmit": cmd(`echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}'`)}, context: "ctx"},
		{name: "malformed is a problem, not a block", c: Config{"UserPromptSubmit": cmd(`echo '{"decision":'`)}, problem: "not valid hook JSON", noContext: true},
		{name: "other status is a problem", c: Config{"UserPromptSubmit": cmd("echo bad >&2; exit 3")}, problem: "exited with status 3: bad", noContext: true},
		{name: "session start on startup", c: Config{"SessionStart": {{Matcher: "startup", Hooks: []Command{{Command: "echo started"}}}}}, start: "startup", context: "started"},
		{name: "session start matcher", c: Config{"SessionStart": {{Matcher: "resume", Hooks: []Command{{Command: "echo resumed"}}}}}, start: "startup", noContext: true},
		{name: "session start only on the first turn", c: Config{"SessionStart": cmd("echo started")}, noContext: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newRunner(tc.c).BeforePrompt(ctx, engine.PromptQuery{SessionID: "s", Prompt: "hello", Start: tc.start})
			if v.Block != tc.block || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("block %v reason %q", v.Block, v.Reason)
			}
			if tc.context != "" && v.Context != tc.context || tc.noContext && v.Context != "" {
				t.Errorf("context %q", v.Context)
			}
			if got := strings.Join(v.Problems, "|"); tc.problem != "" && !strings.Contains(got, tc.problem) || tc.problem == "" && got != "" {
				t.Errorf("problems %q", got)
			}
		})
	}
}

func TestNotifyRunsNotificationHooks(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "note.json")
	r, err := New(Options{Workspace: dir, User: Config{"Notification": {{Matcher: "permission_prompt", Hooks: []Command{{Command: "cat > " + got}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Notify(context.Background(), "s1", dir, "kz needs your permission to use bash")
	var in map[string]any
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &in); err != nil || in["hook_event_name"] != "Notification" || in["message"] != "kz needs your permission to use bash" ||
		in["notification_type"] != "permission_prompt" || in["session_id"] != "s1" {
		t.Errorf("notification input %s (%v)", b, err)
	}
}
