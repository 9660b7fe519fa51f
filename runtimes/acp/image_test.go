package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

func line(dir, msg string) clitest.Line { return clitest.Line{Dir: dir, Msg: json.RawMessage(msg)} }

// TestImagesRefusedByAnAgentWithoutImagePrompts: an agent whose initialize
// declares no image prompts never gets the turn's prompt (no session is
// even opened), the turn fails with kind capability naming the fix, and
// the runtime then declares no vision, so the next message with images
// fails before its turn starts.
func TestImagesRefusedByAnAgentWithoutImagePrompts(t *testing.T) {
	f := newFake(t, []clitest.Line{
		line("->", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`),
		line("<-", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"plain-agent","version":"1.0.0"},"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false}}}}`),
		line("->", `{"jsonrpc":"2.0","id":2,"method":"authenticate"}`),
		line("<-", `{"jsonrpc":"2.0","id":2,"result":{}}`),
	})
	if !f.rt.Capabilities("").Has(engine.CapVision) {
		t.Fatal("before any agent said otherwise, vision is declared")
	}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg := engine.UserMessage{Text: "what is this?", Images: []engine.Image{enginetest.Image(t, 2)}}
	final, err := h.Session.RunMessage(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != string(engine.StatusError) || final.ErrorKind != engine.ErrCapability ||
		!strings.Contains(final.Text, "does not take images") || !strings.Contains(final.Text, "switch to a runtime with vision") {
		t.Fatalf("final %+v", final)
	}
	if n := f.CheckReport(); n != 2 {
		t.Errorf("the fake checked %d host lines, want 2 (initialize, authenticate): nothing else may be sent", n)
	}
	if f.rt.Capabilities("").Has(engine.CapVision) {
		t.Fatal("after the agent declared no image prompts, vision is not declared")
	}
	_, err = h.Session.RunMessage(ctx, msg)
	var ve *engine.VisionError
	if !errors.As(err, &ve) {
		t.Fatalf("the next image turn fails before it starts: %v", err)
	}
}

// TestPromptBlocksFollowTheAgentsCapability: image blocks in ACP's form
// (mimeType, base64 data) go only to an agent that declared image prompts.
func TestPromptBlocksFollowTheAgentsCapability(t *testing.T) {
	im := enginetest.Image(t, 1)
	tr := &turnRun{t: &engine.Turn{Images: []engine.Image{im}}, a: &agent{}}
	if got := tr.promptBlocks("hi"); len(got) != 1 || got[0]["type"] != "text" {
		t.Fatalf("without the capability: %v", got)
	}
	tr.a.init.AgentCapabilities.PromptCapabilities.Image = true
	got := tr.promptBlocks("hi")
	want := map[string]string{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(im.Data)}
	if len(got) != 2 || got[0]["text"] != "hi" || !mapsEqual(got[1], want) {
		t.Fatalf("with the capability: %v", got)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRealGeminiImageReachesTheModel drives the real Gemini CLI, which
// declares image prompts: the image kz sends in session/prompt reaches
// the Gemini API request as inline data, bytes intact.
func TestRealGeminiImageReachesTheModel(t *testing.T) {
	api := newGeminiAPI(t, func(int, string) gstep { return gstep{Text: "A gray bar."} })
	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	im := enginetest.Image(t, 3)
	final, err := h.Session.RunMessage(ctx, engine.UserMessage{Text: "What is in this picture?", Images: []engine.Image{im}})
	if err != nil || final.Status != string(engine.StatusComplete) || final.Output != "A gray bar." {
		t.Fatalf("final %+v err %v", final, err)
	}
	data := base64.StdEncoding.EncodeToString(im.Data)
	for _, req := range api.Requests() {
		b, _ := json.Marshal(req["contents"])
		if strings.Contains(string(b), `"inlineData":{"data":"`+data+`","mimeType":"image/png"}`) {
			return
		}
	}
	b, _ := json.Marshal(api.Requests())
	t.Fatalf("no model request carried the image as inline data: %.2000s", b)
}
