package native

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// notingClient notes each request to the model; the first releases the
// recording, which a loop that waited for it first would never reach
// (the test's timer releases it then, and the order shows it).
type notingClient struct {
	llm.Client
	cp *enginetest.HeldCheckpointer
	n  int
}

func (c *notingClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	c.n++
	c.cp.Note(fmt.Sprint("request ", c.n))
	c.cp.Release()
	return c.Client.Stream(ctx, req, onDelta)
}

// The loop sends its first request while the workspace's state at the
// turn's start is recorded, not after, and no call is decided (nor its
// file kept) before that state is recorded.
func TestFirstRequestGoesOutWhileTheStateIsRecorded(t *testing.T) {
	t.Parallel()
	cp := enginetest.NewHeldCheckpointer()
	timer := time.AfterFunc(2*time.Second, cp.Release)
	defer timer.Stop()
	fake := llmtest.New(t, llm.ProviderAnthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "e1", Name: "edit_file", Args: `{"path":"a.txt","old":"alpha","new":"omega"}`}}},
		llmtest.Reply{Text: "Done."})
	inner, err := llm.New(fake.Config())
	if err != nil {
		t.Fatal(err)
	}
	tools := &fsTools{}
	rt := mustNative(t, Config{Name: "native", Client: &notingClient{Client: inner, cp: cp}, Models: []string{"claude-sonnet-4-5"}, Tools: tools})
	h := newHarness(t, harnessOpts{runtimes: []engine.RuntimeEntry{{Runtime: rt}}, runtime: "native", tools: tools,
		checkpoints: cp, setup: func(ws string) {
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}})
	if final := h.run("edit a.txt"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	// The recording and the first request start side by side, in either
	// order; the recording ends only after the request.
	got := cp.Steps()
	at := func(s string) int { return slices.Index(got, s) }
	if len(got) != 5 || at("refresh") < 0 || at("request 1") < 0 || at("recorded") != 2 || at("before e1") != 3 || at("request 2") != 4 {
		t.Fatalf("steps %q: want the recording and request 1, then recorded, before e1, request 2", got)
	}
	if got := h.read("a.txt"); got != "omega\n" {
		t.Fatalf("a.txt = %q", got)
	}
}
