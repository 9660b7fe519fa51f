package claudecode

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// imageBlocks returns the base64 data of the image blocks of a message
// content, keyed by media type, as the model API received them.
func imageBlocks(t *testing.T, raw json.RawMessage) []map[string]string {
	t.Helper()
	var content []struct {
		Type   string            `json:"type"`
		Source map[string]string `json:"source"`
	}
	if err := json.Unmarshal(raw, &content); err != nil {
		return nil // a plain string content has no image
	}
	var out []map[string]string
	for _, c := range content {
		if c.Type == "image" {
			out = append(out, c.Source)
		}
	}
	return out
}

// TestUserLineCarriesImageBlocks: kz's stream-json user line is the text
// block followed by one base64 image block per image.
func TestUserLineCarriesImageBlocks(t *testing.T) {
	im := enginetest.Image(t, 2)
	b, err := json.Marshal(newUserLine("look", im))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"user","session_id":"","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"text","text":"look"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(im.Data) + `"}}]}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if b, _ := json.Marshal(newUserLine("plain")); strings.Contains(string(b), "image") {
		t.Fatalf("a text-only line has no image block: %s", b)
	}
}

// TestRealImageReachesTheModel drives the real claude CLI: the image kz
// writes in its stream-json input reaches the Messages API request as an
// image block, bytes intact, next to the prompt; a primed fresh session
// (after a turn on another runtime) gets the history's image too.
func TestRealImageReachesTheModel(t *testing.T) {
	api := newFakeAPI(t, func(r *apiRequest) fakeReply { return fakeReply{Text: "A gray bar."} })
	rt, _ := realSetup(t, api)
	if !rt.Capabilities("").Has(engine.CapVision) {
		t.Fatal("claude declares vision")
	}
	h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	im := enginetest.Image(t, 3)
	final, err := h.Session.RunMessage(context.Background(), engine.UserMessage{Text: "What is in this picture?", Images: []engine.Image{im}})
	if err != nil || final.Status != string(engine.StatusComplete) || final.Output != "A gray bar." {
		t.Fatalf("final %+v err %v", final, err)
	}
	var found bool
	for _, r := range api.Requests() {
		for _, m := range r.Messages {
			if m.Role != "user" {
				continue
			}
			for _, src := range imageBlocks(t, m.Content) {
				if src["type"] == "base64" && src["media_type"] == "image/png" && src["data"] == base64.StdEncoding.EncodeToString(im.Data) {
					found = true
				}
			}
			if found && !strings.Contains(string(m.Content), "What is in this picture?") {
				t.Errorf("the image came without its prompt: %s", m.Content)
			}
		}
	}
	if !found {
		t.Fatalf("no request carried the image; last request: %+v", api.Requests()[len(api.Requests())-1].Messages)
	}
}

// TestPrimeImagesKeepsTheNewest: a primed message carries the history's
// images before the turn's own, at most engine.MaxImages, newest kept.
func TestPrimeImagesKeepsTheNewest(t *testing.T) {
	a, b := enginetest.Image(t, 1), enginetest.Image(t, 2)
	hist := []engine.TranscriptEntry{{Kind: engine.EntryUser, Images: []engine.Image{a}}, {Kind: engine.EntryAssistant, Text: "x"}}
	got := primeImages(hist, []engine.Image{b})
	if len(got) != 2 || got[0].SHA256 != a.SHA256 || got[1].SHA256 != b.SHA256 {
		t.Fatalf("got %+v", got)
	}
	many := make([]engine.Image, engine.MaxImages)
	for i := range many {
		many[i] = a
	}
	got = primeImages([]engine.TranscriptEntry{{Kind: engine.EntryUser, Images: many}}, []engine.Image{b})
	if len(got) != engine.MaxImages || got[len(got)-1].SHA256 != b.SHA256 {
		t.Fatalf("capped to the newest: %d, last %s", len(got), got[len(got)-1].Name)
	}
}
