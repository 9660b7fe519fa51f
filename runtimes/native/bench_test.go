package native

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aopt "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	oopt "github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// timingClient notes when the SDK client yields the first delta of a
// response, before kz does anything with it.
type timingClient struct {
	llm.Client
	first atomic.Int64
}

func (c *timingClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	c.first.Store(0)
	return c.Client.Stream(ctx, req, func(d llm.Delta) {
		c.first.CompareAndSwap(0, time.Now().UnixNano())
		onDelta(d)
	})
}

// BenchmarkFirstDeltaLatency measures the time from the SDK yielding the
// first text delta to a session subscriber receiving the text_delta event,
// through a real engine.Session (journal, transcript fold, bus).
func BenchmarkFirstDeltaLatency(b *testing.B) {
	fake := llmtest.New(b, llm.ProviderAnthropic)
	for range b.N {
		fake.Push(llmtest.Reply{Text: "Hello there, this is a short answer.", Usage: engine.Usage{InputTokens: 10, OutputTokens: 8}})
	}
	inner, err := llm.New(fake.Config())
	if err != nil {
		b.Fatal(err)
	}
	tc := &timingClient{Client: inner}
	rt, err := New(Config{Client: tc, Models: []string{"claude-haiku-4-5"}})
	if err != nil {
		b.Fatal(err)
	}
	lat := make(chan time.Duration, 1)
	ws := b.TempDir()
	// open starts a session with a subscriber that reports the first delta
	// of each turn. Sessions are renewed every 100 turns so that the
	// conversation (sent whole with every request) stays small.
	open := func() (*engine.Session, func()) {
		s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: &countJournal{}, Runtimes: []engine.RuntimeEntry{{Runtime: rt}},
			Runtime: "native", Mode: engine.ModeAnalysisOnly})
		if err != nil {
			b.Fatal(err)
		}
		sub := s.Subscribe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			seen := int64(-1)
			for {
				ev, err := sub.Next(ctx)
				if err != nil {
					return
				}
				if ev.Type == engine.EventTextDelta && ev.TurnID != seen {
					seen = ev.TurnID
					lat <- time.Duration(time.Now().UnixNano() - tc.first.Load())
				}
			}
		}()
		return s, func() {
			cancel()
			<-done
			sub.Close()
			_ = s.Close(context.Background())
		}
	}
	var all []time.Duration
	s, closeSession := open()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%100 == 0 {
			closeSession()
			s, closeSession = open()
		}
		if _, err := s.RunTurn(context.Background(), "hi"); err != nil {
			b.Fatal(err)
		}
		all = append(all, <-lat)
	}
	closeSession()
	b.StopTimer()
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const benchTokens = 20000

func bigReply() llmtest.Reply {
	d := make([]string, benchTokens)
	for i := range d {
		d[i] = fmt.Sprintf(" w%d", i%1000)
	}
	return llmtest.Reply{Deltas: d, Usage: engine.Usage{InputTokens: 100, OutputTokens: benchTokens}}
}

// bareSDK consumes the recorded stream with the SDK alone, keeping the text
// as any consumer would.
func bareSDK(b *testing.B, p llm.Provider, body []byte) int {
	hc := &http.Client{Transport: llmtest.ReplayTransport{Body: body}}
	var sb strings.Builder
	switch p {
	case llm.ProviderAnthropic:
		c := anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithAPIKey("k"), aopt.WithBaseURL("http://replay.invalid/"),
			aopt.WithHTTPClient(hc), aopt.WithMaxRetries(0))
		s := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{Model: "claude-haiku-4-5", MaxTokens: 30000,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("go"))}})
		for s.Next() {
			if ev := s.Current(); ev.Type == "content_block_delta" {
				sb.WriteString(ev.Delta.Text)
			}
		}
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
		_ = s.Close()
	case llm.ProviderGemini:
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
			HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: "http://replay.invalid/"}})
		if err != nil {
			b.Fatal(err)
		}
		for resp, err := range c.Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("go"), nil) {
			if err != nil {
				b.Fatal(err)
			}
			for _, cand := range resp.Candidates {
				if cand.Content != nil {
					for _, part := range cand.Content.Parts {
						sb.WriteString(part.Text)
					}
				}
			}
		}
	default:
		c := openai.NewClient(oopt.WithAPIKey("k"), oopt.WithBaseURL("http://replay.invalid/"), oopt.WithHTTPClient(hc), oopt.WithMaxRetries(0))
		s := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-4o",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go")}})
		for s.Next() {
			for _, ch := range s.Current().Choices {
				sb.WriteString(ch.Delta.Content)
			}
		}
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
		_ = s.Close()
	}
	return sb.Len()
}

// BenchmarkOverhead20kTokens compares the CPU time of one 20,000-token
// streamed answer consumed by the bare SDK, by the native runtime (deltas
// emitted to a host), and by the native runtime inside a real session
// (journal, transcript, bus), on the same recorded stream without a socket.
func BenchmarkOverhead20kTokens(b *testing.B) {
	for _, p := range []llm.Provider{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderGemini} {
		b.Run(string(p), func(b *testing.B) {
			body := llmtest.Render(p, bigReply())
			cfg := llm.Config{Provider: p, BaseURL: "http://replay.invalid/", Transport: llmtest.ReplayTransport{Body: body},
				LookupEnv: func(string) (string, bool) { return "k", true }}
			rt, err := New(Config{LLM: cfg, Models: []string{"claude-haiku-4-5"}})
			if err != nil {
				b.Fatal(err)
			}
			ws := b.TempDir()
			var bare, native, session time.Duration
			var deltas atomic.Int64
			host := &nopHost{onEmit: func(ev engine.Event) {
				if ev.Type == engine.EventTextDelta {
					deltas.Add(1)
				}
			}}
			b.ResetTimer()
			for range b.N {
				// Each phase starts after a collection, so that the garbage
				// of one phase is not collected on the next phase's clock.
				runtime.GC()
				t0 := cpuTime()
				if n := bareSDK(b, p, body); n == 0 {
					b.Fatal("no text")
				}
				runtime.GC()
				bare += cpuTime() - t0
				t1 := cpuTime()
				if _, err := rt.run(context.Background(), &engine.Turn{Prompt: "go", Mode: engine.ModeAnalysisOnly}, host); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				native += cpuTime() - t1
				t2 := cpuTime()
				// A fresh session each time: the same session would send the
				// growing conversation with every request.
				s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: &countJournal{}, Runtimes: []engine.RuntimeEntry{{Runtime: rt}},
					Runtime: "native", Mode: engine.ModeAnalysisOnly})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.RunTurn(context.Background(), "go"); err != nil {
					b.Fatal(err)
				}
				_ = s.Close(context.Background())
				runtime.GC()
				session += cpuTime() - t2
			}
			b.StopTimer()
			if deltas.Load() != int64(benchTokens*b.N) {
				b.Fatalf("%d deltas, want %d", deltas.Load(), benchTokens*b.N)
			}
			n := float64(b.N)
			b.ReportMetric(float64(bare.Microseconds())/n/1000, "sdk-cpu-ms/op")
			b.ReportMetric(float64(native.Microseconds())/n/1000, "native-cpu-ms/op")
			b.ReportMetric(float64(session.Microseconds())/n/1000, "session-cpu-ms/op")
			b.ReportMetric(100*(float64(native)/float64(bare)-1), "native-overhead-%")
			b.ReportMetric(100*(float64(session)/float64(bare)-1), "session-overhead-%")
		})
	}
}

// countJournal counts events: the benchmark measures the session, not a
// test journal that keeps every event.
type countJournal struct{ n atomic.Int64 }

func (j *countJournal) Append(engine.Event) error   { j.n.Add(1); return nil }
func (j *countJournal) Flush(context.Context) error { return nil }
