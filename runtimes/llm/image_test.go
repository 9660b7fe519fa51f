package llm_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// imageRequest is a conversation whose history holds an image (as a
// resumed or switched session primes it) and whose new message carries
// another one.
func imageRequest(old, cur engine.Image) llm.Request {
	hist := []engine.TranscriptEntry{
		{Kind: engine.EntryUser, Text: "first look", Images: []engine.Image{old}},
		{Kind: engine.EntryAssistant, Text: "a gray line"},
	}
	msgs := append(llm.FromTranscript(hist), llm.Message{Role: llm.RoleUser, Text: "and this?", Images: []engine.Image{cur}})
	return llm.Request{Model: "m", Messages: msgs}
}

// at walks a decoded JSON body by keys and indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %v is not an object", path, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: %v has no element %d", path, v, k)
			}
			v = l[k]
		}
	}
	return v
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestImagesRequestShapePerProvider checks, on each official SDK's wire,
// that a user message's images go out as that API's inline image part,
// after the text, in history and in the new message alike.
func TestImagesRequestShapePerProvider(t *testing.T) {
	t.Parallel()
	old, cur := enginetest.Image(t, 1), enginetest.Image(t, 2)
	b64 := func(im engine.Image) string { return base64.StdEncoding.EncodeToString(im.Data) }
	cases := []struct {
		name string
		p    llm.Provider
		api  llm.OpenAIAPI
		// user returns the content of the n-th user message of the body.
		user func(t *testing.T, body any, n int) any
		want func(text string, im engine.Image) string
	}{
		{"anthropic", llm.ProviderAnthropic, "",
			func(t *testing.T, body any, n int) any { return at(t, body, "messages", 2*n, "content") },
			func(text string, im engine.Image) string {
				return `[{"type":"text","text":"` + text + `"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64(im) + `"}}]`
			}},
		{"openai-chat", llm.ProviderOpenAI, llm.OpenAIChat,
			func(t *testing.T, body any, n int) any { return at(t, body, "messages", 2*n, "content") },
			func(text string, im engine.Image) string {
				return `[{"type":"text","text":"` + text + `"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64(im) + `"}}]`
			}},
		{"openai-responses", llm.ProviderOpenAI, llm.OpenAIResponses,
			func(t *testing.T, body any, n int) any { return at(t, body, "input", 2*n, "content") },
			func(text string, im engine.Image) string {
				return `[{"type":"input_text","text":"` + text + `"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,` + b64(im) + `"}]`
			}},
		{"gemini", llm.ProviderGemini, "",
			func(t *testing.T, body any, n int) any { return at(t, body, "contents", 2*n, "parts") },
			func(text string, im engine.Image) string {
				return `[{"text":"` + text + `"},{"inlineData":{"mimeType":"image/png","data":"` + b64(im) + `"}}]`
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := llmtest.New(t, tc.p, llmtest.Reply{Text: "a wider line"})
			s.API = tc.api
			if _, err := newClient(t, s).Stream(context.Background(), imageRequest(old, cur), func(llm.Delta) {}); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			for n, want := range []string{tc.want("first look", old), tc.want("and this?", cur)} {
				got := tc.user(t, reqs[0].Body, n)
				if !reflect.DeepEqual(got, decode(t, want)) {
					gj, _ := json.Marshal(got)
					t.Errorf("user message %d:\n got %s\nwant %s", n, gj, want)
				}
			}
		})
	}
}

// TestTextOnlyMessagesKeepTheirShape: without images, a user message stays
// a plain string where the API allows one, as before images existed.
func TestTextOnlyMessagesKeepTheirShape(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llm.ProviderOpenAI, llmtest.Reply{Text: "ok"})
	s.API = llm.OpenAIChat
	if _, err := newClient(t, s).Stream(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, func(llm.Delta) {}); err != nil {
		t.Fatal(err)
	}
	if got := at(t, s.Requests()[0].Body, "messages", 0, "content"); got != "hi" {
		t.Fatalf("content %v", got)
	}
}

// TestForVisionLabelsImagesForABlindModel: a model without vision gets
// each image as its label after the message's text, and the caller's
// messages are left as they were; a model with vision gets them as they
// are.
func TestForVisionLabelsImagesForABlindModel(t *testing.T) {
	t.Parallel()
	im := enginetest.Image(t, 1)
	msgs := imageRequest(im, im).Messages
	if got := llm.ForVision(msgs, true); len(got[0].Images) != 1 || len(got[2].Images) != 1 {
		t.Fatalf("with vision: %+v", got)
	}
	got := llm.ForVision(msgs, false)
	want := "first look\n\n" + im.Label()
	if got[0].Text != want || got[0].Images != nil || got[2].Text != "and this?\n\n"+im.Label() || got[1].Text != "a gray line" {
		t.Fatalf("without vision: %+v", got)
	}
	if len(msgs[0].Images) != 1 || msgs[0].Text != "first look" {
		t.Fatal("the caller's messages must not change")
	}
}
