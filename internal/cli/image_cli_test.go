package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// imageConfig configures two native runtimes: blind, whose model has no
// vision, and eyes, whose model has; blind is the default.
func imageConfig(sb *sandbox, blindURL, eyesURL string) {
	sb.userConfig(fmt.Sprintf(`default_runtime = "blind"
strategy = "auto"

[runtimes.blind]
kind = "native"
provider = "openai"
base_url = %q
api_key_env = "KZ_IMG_KEY"
models = ["text-only-model"]

[runtimes.eyes]
kind = "native"
provider = "anthropic"
base_url = %q
api_key_env = "KZ_IMG_KEY"
models = ["seeing-model"]

[[models]]
id = "text-only-model"
vision = false
tools = true
input_per_mtok = 1.0
output_per_mtok = 1.0

[[models]]
id = "seeing-model"
vision = true
tools = true
input_per_mtok = 1.0
output_per_mtok = 1.0
`, blindURL+"/v1", eyesURL))
}

func finalOf(t *testing.T, out string) engine.Event {
	t.Helper()
	var ev engine.Event
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &ev); err != nil {
		t.Fatalf("json output %q: %v", out, err)
	}
	return ev
}

// TestImageFlagRoutesToVisionAndFailsFastElsewhere is kz -p --image as a
// person runs it: the selector takes the runtime with vision over the
// default one without it, the model request carries the image, a resumed
// session still sends it, and an explicit runtime without vision, a
// missing file or a file that is not an image fail before any request
// with a clear error_kind.
func TestImageFlagRoutesToVisionAndFailsFastElsewhere(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	blind := llmtest.New(t, llm.ProviderOpenAI)
	eyes := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Text: "A gray bar.", Usage: engine.Usage{InputTokens: 10, OutputTokens: 3}},
		llmtest.Reply{Text: "Still gray.", Usage: engine.Usage{InputTokens: 10, OutputTokens: 3}})
	imageConfig(sb, blind.URL, eyes.URL)
	img := enginetest.PNG(t, 4, 1)
	// The name says JPEG; the content, which decides, is PNG.
	if err := os.WriteFile(filepath.Join(sb.workspace, "shot.jpg"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.workspace, "notes.png"), []byte("just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"KZ_IMG_KEY=sk-test"}
	b64 := base64.StdEncoding.EncodeToString(img)

	// An explicit runtime without vision: refused before the turn.
	out, errOut, code := sb.kzProcess(env, "-p", "what is this?", "--image", "shot.jpg", "--runtime", "blind", "--output-format", "json")
	if code != 1 {
		t.Fatalf("explicit blind runtime: exit %d\n%s\n%s", code, out, errOut)
	}
	if ev := finalOf(t, out); ev.ErrorKind != engine.ErrCapability || !strings.Contains(ev.Text, "runtime blind") || !strings.Contains(ev.Text, "switch to eyes") {
		t.Errorf("final %+v", ev)
	}

	// Files that cannot be attached.
	for file, want := range map[string]string{"missing.png": "no such file", "notes.png": "not a PNG, JPEG, GIF or WebP image"} {
		out, errOut, code = sb.kzProcess(env, "-p", "what is this?", "--image", file, "--output-format", "json")
		if code != 1 {
			t.Fatalf("%s: exit %d\n%s\n%s", file, code, out, errOut)
		}
		if ev := finalOf(t, out); ev.ErrorKind != engine.ErrInvalidArgument || !strings.Contains(ev.Text, want) {
			t.Errorf("%s: final %+v", file, ev)
		}
	}
	if n := len(blind.Requests()) + len(eyes.Requests()); n != 0 {
		t.Fatalf("%d model requests were made for turns that must not start", n)
	}

	// The default runtime has no vision: the selector routes to eyes.
	out, errOut, code = sb.kzProcess(env, "-p", "what is this?", "--image", "shot.jpg")
	if code != 0 || out != "A gray bar.\n" {
		t.Fatalf("routed turn: exit %d stdout %q stderr %q", code, out, errOut)
	}
	reqs := eyes.Requests()
	if len(reqs) != 1 || len(blind.Requests()) != 0 {
		t.Fatalf("requests: eyes %d blind %d", len(reqs), len(blind.Requests()))
	}
	if !reqs[0].Contains(`{"data":"`+b64+`","media_type":"image/png","type":"base64"}`) &&
		!reqs[0].Contains(`{"type":"base64","media_type":"image/png","data":"`+b64+`"}`) {
		t.Fatalf("the image block did not reach the model: %s", reqs[0].Raw)
	}

	// A resumed session primes the model with the image it was shown.
	out, errOut, code = sb.kzProcess(env, "-p", "and now?", "--continue", "--runtime", "eyes")
	if code != 0 || out != "Still gray.\n" {
		t.Fatalf("continued turn: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if reqs = eyes.Requests(); len(reqs) != 2 || !reqs[1].Contains(b64) {
		t.Fatalf("the resumed session lost its image: %s", reqs[len(reqs)-1].Raw)
	}

	// --image belongs to -p.
	if _, errOut, code = sb.kzProcess(env, "--image", "shot.jpg"); code != 2 || !strings.Contains(errOut, "--image attaches to a -p prompt") {
		t.Errorf("--image without -p: exit %d %q", code, errOut)
	}
}
