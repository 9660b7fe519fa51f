package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// noPushHook is the README's worked example.
const noPushHook = `#!/bin/sh
# Block git push on every runtime: exit 2 refuses the call, and stderr is
# what the model reads.
input=$(cat)
case "$input" in
*'"command":"git push'*)
  echo "git push is blocked by policy: open a pull request instead" >&2
  exit 2;;
esac
exit 0
`

// TestHooksOnTheNativeRuntime runs kz -p as a person does, with the
// native runtime over a fake Anthropic API and the README's hook in the
// user config. The model's `git push` is refused by the hook even in yolo
// mode, the model reads the hook's message as the call's result, and the
// decision is a permission_decided of stage hook naming the hook; a second
// hook's JSON allow lets a headless call run that would otherwise be
// refused for want of someone to ask.
func TestHooksOnTheNativeRuntime(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	// Under bubblewrap a command sees a private /tmp, so the hooks live
	// where a command can see them (a person's would be in their home).
	hookDir := filepath.Join(sb.workspace, ".hooks")
	if err := os.MkdirAll(hookDir, 0o755); err != nil {
		t.Fatal(err)
	}
	noPush, allowTouch := filepath.Join(hookDir, "no-push.sh"), filepath.Join(hookDir, "allow-touch.sh")
	for p, body := range map[string]string{noPush: noPushHook, allowTouch: `#!/bin/sh
case "$(cat)" in
*'"command":"touch made-by-hook.txt"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"touch is fine"}}';;
esac
`} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := hookFake(t, sb, fmt.Sprintf(`[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
timeout = 20

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
command = %q
`, noPush, allowTouch),
		llmtest.Reply{Text: "Pushing.", Calls: []llmtest.Call{{ID: "c1", Name: "bash", Args: `{"command":"git push origin main"}`}}},
		llmtest.Reply{Text: "Blocked."},
		llmtest.Reply{Text: "Touching.", Calls: []llmtest.Call{{ID: "c2", Name: "bash", Args: `{"command":"touch made-by-hook.txt"}`}}},
		llmtest.Reply{Text: "Done."})
	env := hookEnv

	out, errOut, code := sb.kzProcess(env, "-p", "push it", "--runtime", "native", "--permission-mode", "yolo", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	d := decision(t, streamEvents(t, out), "c1")
	if d.Decision != engine.DecisionDeny || d.Stage != "hook" || d.Reason != "git push is blocked by policy: open a pull request instead" ||
		!strings.Contains(d.Rule, "no-push.sh") {
		t.Errorf("git push: %+v", d)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !reqs[1].Contains("git push is blocked by policy: open a pull request instead") {
		t.Fatalf("the model did not read the hook's message: %d requests", len(reqs))
	}

	out, errOut, code = sb.kzProcess(env, "-p", "touch it", "--runtime", "native", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	d = decision(t, streamEvents(t, out), "c2")
	if d.Decision != engine.DecisionAllow || d.Stage != "hook" || d.Reason != "touch is fine" {
		t.Errorf("touch: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(sb.workspace, "made-by-hook.txt")); err != nil {
		t.Errorf("the call the hook allowed did not run: %v", err)
	}

	// kz policy check runs the hooks and shows their stage.
	out, errOut, code = sb.kzProcess(env, "policy", "check", "--tool", "Bash", "--input", `{"command":"git push"}`)
	if code != 0 || !strings.Contains(out, "decision: deny\nstage:    hook\n") || !strings.Contains(out, "no-push.sh") {
		t.Errorf("policy check: exit %d\n%s\n%s", code, out, errOut)
	}
}

func decision(t *testing.T, evs []engine.Event, callID string) engine.Event {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == engine.EventPermissionDecided && ev.ToolCallID == callID {
			return ev
		}
	}
	t.Fatalf("no permission_decided for %s", callID)
	return engine.Event{}
}

// TestPromptHooks: a SessionStart hook's context and a UserPromptSubmit
// hook's context reach the model with the prompt (the stored prompt is
// what the person typed), and a UserPromptSubmit hook's exit status 2
// refuses a prompt before any model call, with its message as the turn's
// error.
func TestPromptHooks(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	fake := hookFake(t, sb, `[[hooks.SessionStart]]
matcher = "startup"
[[hooks.SessionStart.hooks]]
command = "echo 'The build command is make ci.'"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
command = '''
input=$(cat)
case "$input" in
*password*) echo "prompts must not carry passwords" >&2; exit 2;;
esac
echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Today is release day."}}'
'''
`, llmtest.Reply{Text: "Fine."}, llmtest.Reply{Text: "Again."})
	env := hookEnv
	out, errOut, code := sb.kzProcess(env, "-p", "build it", "--runtime", "native", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || !reqs[0].Contains("build it") || !reqs[0].Contains("The build command is make ci.") || !reqs[0].Contains("Today is release day.") {
		t.Fatalf("the model did not get the hooks' context: %d requests", len(reqs))
	}
	for _, ev := range streamEvents(t, out) {
		if ev.Type == engine.EventUserMessage && ev.Text != "build it" {
			t.Errorf("user_message %q: the stored prompt is what the person typed", ev.Text)
		}
	}

	out, _, code = sb.kzProcess(env, "-p", "the password is hunter2", "--runtime", "native", "--output-format", "stream-json")
	evs := streamEvents(t, out)
	final := evs[len(evs)-1]
	if code == 0 || final.Type != engine.EventFinalResult || final.Status != string(engine.StatusError) ||
		!strings.Contains(final.Text, "prompts must not carry passwords") || final.ErrorKind != engine.ErrDenied {
		t.Errorf("blocked prompt: exit %d, final %+v", code, final)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("a blocked prompt reached the model (%d requests)", n)
	}
}

// TestPostToolUseFeedbackOnTheNativeRuntime: after the native runtime's
// write_file ran, a PostToolUse hook for Write reads Claude Code's input
// (tool_response included) and its "block" reason reaches the model with
// the call's result; the file was written all the same.
func TestPostToolUseFeedbackOnTheNativeRuntime(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	fake := hookFake(t, sb, `[[hooks.PostToolUse]]
matcher = "Edit|Write"
[[hooks.PostToolUse.hooks]]
command = '''
input=$(cat)
case "$input" in
*'"tool_name":"Write"'*'"file_path":"'*main.go*'"tool_response":{"output":'*) echo '{"decision":"block","reason":"run gofmt on main.go next"}';;
*) echo "unexpected input: $input" >&2; exit 1;;
esac
'''
`,
		llmtest.Reply{Text: "Writing.", Calls: []llmtest.Call{{ID: "w1", Name: "write_file", Args: `{"path":"main.go","content":"package main\n"}`}}},
		llmtest.Reply{Text: "Done."})
	out, errOut, code := sb.kzProcess(hookEnv, "-p", "write main.go", "--runtime", "native", "--permission-mode", "accept-edits")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !reqs[1].Contains("run gofmt on main.go next") {
		t.Fatalf("the model did not read the hook's feedback (%d requests)", len(reqs))
	}
	if b, err := os.ReadFile(filepath.Join(sb.workspace, "main.go")); err != nil || string(b) != "package main\n" {
		t.Errorf("main.go %q %v", b, err)
	}
}

// hookEnv is the environment of hookFake's kz: the fake API's key.
var hookEnv = []string{"KZ_CLI_KEY=sk-test"}

// hookFake starts a fake Anthropic API answering replies and writes the
// sandbox's user config: the native runtime over that API (its key in
// hookEnv) followed by hooks, a TOML text of [[hooks.…]] tables.
func hookFake(t *testing.T, sb *sandbox, hooks string, replies ...llmtest.Reply) *llmtest.Server {
	t.Helper()
	fake := llmtest.New(t, llm.ProviderAnthropic, replies...)
	sb.userConfig(fmt.Sprintf(`[runtimes.native]
kind = "native"
provider = "anthropic"
base_url = %q
api_key_env = "KZ_CLI_KEY"
models = ["claude-sonnet-4-5"]

`, fake.URL) + hooks)
	return fake
}
