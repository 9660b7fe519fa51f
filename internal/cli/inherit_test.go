package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
)

// TestInheritedDescriptorsDoNotReachCommands: kz started with an open
// descriptor its parent did not mark close-on-exec (fd 3, on a secret file
// outside the workspace) does not pass it on. A yolo command of the native
// runtime that reads /proc/self/fd/3 and lists its descriptors gets
// neither the secret nor the descriptor. (The bash tool's commands run on
// a sandbox server, which hands a command only its standard descriptors,
// so this holds there even without kz's own marking; the marking is what
// keeps the descriptor from an agent CLI or a command under a bwrap of its
// own, and proc's test checks it directly.)
func TestInheritedDescriptorsDoNotReachCommands(t *testing.T) {
	if st := ossandbox.Probe(); !st.Full && os.Getenv("KZ_REQUIRE_SANDBOX") == "" {
		t.Skip("no full sandbox here (" + st.Reason + "); set KZ_REQUIRE_SANDBOX=1 to fail instead")
	}
	sb := newSandbox(t)
	const secret = "INHERITED-SECRET-3b7e"
	outside := t.TempDir()
	path := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()

	// The reads are in a script of the workspace, so that the gate does
	// not stop them as reads outside it: the descriptor must be gone
	// whatever the gate would have let through.
	writeFile(t, filepath.Join(sb.workspace, "probe.sh"), "cat /proc/self/fd/3\nls -l /proc/self/fd/\n")
	args := jsonString(t, map[string]string{"command": "bash probe.sh"})
	fake := llmtest.New(t, llm.ProviderOpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "bash", Args: args}}, Usage: engine.Usage{InputTokens: 10, OutputTokens: 5}},
		llmtest.Reply{Text: "done", Usage: engine.Usage{InputTokens: 10, OutputTokens: 1}})
	sb.userConfig("[runtimes.native]\nkind = \"native\"\nprovider = \"openai\"\napi = \"chat\"\nbase_url = \"" + fake.URL + "/v1\"\napi_key_env = \"KZ_CLI_KEY\"\nmodels = [\"gpt-4o\"]\n")

	cmd := exec.Command(os.Args[0], "-p", "go", "--runtime", "native", "--permission-mode", "yolo")
	cmd.Dir = sb.workspace
	cmd.Env = append(os.Environ(), "KZ_MAIN=1", "KZ_CLI_KEY=sk-test-0")
	// ExtraFiles hands fd 3 down without close-on-exec, as a shell's
	// `3<secret.txt` would.
	cmd.ExtraFiles = []*os.File{f}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kz: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if reqs[1].Contains(secret) || reqs[1].Contains(path) {
		t.Errorf("the command read the descriptor kz inherited")
	}
	if !reqs[1].Contains("No such file") {
		t.Errorf("the command's output does not say fd 3 is missing:\n%s", reqs[1].Raw)
	}
}
