package codex

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// TestUserInputCarriesImages: turn/start's input is the text item, then
// one "image" item with a data URL per image.
func TestUserInputCarriesImages(t *testing.T) {
	im := enginetest.Image(t, 2)
	b, err := json.Marshal(userInput("look", []engine.Image{im}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"text":"look","type":"text"},{"type":"image","url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(im.Data) + `"}]`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// TestRealImageReachesTheModel drives the real codex app-server: the image
// kz gives turn/start reaches the Responses API request as an input_image
// with the same data URL, next to the prompt.
func TestRealImageReachesTheModel(t *testing.T) {
	api := newRespAPI(t, func(int, map[string]any) step { return step{Text: "A gray bar."} })
	rt, ws := realSetup(t, api)
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	im := enginetest.Image(t, 3)
	final, err := h.Session.RunMessage(ctx, engine.UserMessage{Text: "What is in this picture?", Images: []engine.Image{im}})
	if err != nil || final.Status != string(engine.StatusComplete) || final.Output != "A gray bar." {
		t.Fatalf("final %+v err %v", final, err)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(im.Data)
	for _, req := range api.Requests() {
		b, _ := json.Marshal(req["input"])
		if strings.Contains(string(b), `"image_url":"`+url+`"`) && strings.Contains(string(b), "What is in this picture?") {
			return
		}
	}
	b, _ := json.Marshal(api.Requests())
	t.Fatalf("no model request carried the image: %.3000s", b)
}
