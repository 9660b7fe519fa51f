package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// encoded returns a real 2x2 image in each format the standard library
// writes, and a minimal WebP container (RIFF/WEBP/VP8L), keyed by the
// media type they must sniff as.
func encoded(t *testing.T) map[string][]byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	out := map[string][]byte{}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	out["image/png"] = bytes.Clone(b.Bytes())
	b.Reset()
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	out["image/jpeg"] = bytes.Clone(b.Bytes())
	b.Reset()
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	out["image/gif"] = bytes.Clone(b.Bytes())
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x01\x40\x00\x00\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
	out["image/webp"] = webp
	return out
}

func TestNewImageSniffsContentNotName(t *testing.T) {
	for mt, data := range encoded(t) {
		// The name lies on purpose: the content decides.
		im, err := engine.NewImage("shot.txt", data)
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		if im.MediaType != mt || im.Size != len(data) || len(im.SHA256) != 64 || !bytes.Equal(im.Data, data) {
			t.Errorf("%s: got %+v", mt, im)
		}
	}
	for name, data := range map[string][]byte{
		"text.png":  []byte("not an image at all"),
		"empty.png": nil,
		"svg.png":   []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`),
		"pdf.png":   []byte("%PDF-1.7\n"),
		"bmp.png":   []byte("BM\x00\x00\x00\x00"),
	} {
		if _, err := engine.NewImage(name, data); !errors.Is(err, engine.ErrNotImage) {
			t.Errorf("%s: want ErrNotImage, got %v", name, err)
		}
	}
}

func TestNewImageSizeCap(t *testing.T) {
	data := append(bytes.Clone(encoded(t)["image/png"]), make([]byte, engine.MaxImageBytes)...)
	_, err := engine.NewImage("big.png", data)
	if err == nil || !strings.Contains(err.Error(), "more than the 5.0 MB") {
		t.Fatalf("want a size error naming the cap, got %v", err)
	}
	if _, err := engine.NewImage("edge.png", append(bytes.Clone(encoded(t)["image/png"]), make([]byte, engine.MaxImageBytes-len(encoded(t)["image/png"]))...)); err != nil {
		t.Fatalf("an image of exactly the cap is accepted: %v", err)
	}
}

func TestImageLabelAndJSONCarryNoBytes(t *testing.T) {
	im, err := engine.NewImage("shot.png", encoded(t)["image/png"])
	if err != nil {
		t.Fatal(err)
	}
	im.Size = 120 * 1024
	if got := im.Label(); got != "[image: shot.png 120 KB]" {
		t.Errorf("label %q", got)
	}
	ev := engine.Event{Type: engine.EventUserMessage, Text: "look", Images: []engine.Image{im}}
	raw, err := jsonMarshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "iVBOR") || strings.Contains(raw, `"data"`) || !strings.Contains(raw, `"media_type":"image/png"`) {
		t.Errorf("event JSON must describe the image without its bytes: %s", raw)
	}
}

// seeing is a runtime that records the turns it gets; vision says whether
// it declares CapVision.
type seeing struct {
	name   string
	vision bool
	fail   bool
	mu     sync.Mutex
	turns  []engine.Turn
}

func (r *seeing) Name() string { return r.name }

func (r *seeing) Capabilities(string) engine.Capabilities {
	caps := []engine.Capability{engine.CapTextCompletion, engine.CapStreamingText, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell}
	if r.vision {
		caps = append(caps, engine.CapVision)
	}
	return engine.Capabilities{Set: engine.NewCapSet(caps...)}
}

func (r *seeing) Run(_ context.Context, t *engine.Turn) (engine.Result, error) {
	r.mu.Lock()
	r.turns = append(r.turns, *t)
	r.mu.Unlock()
	if r.fail {
		return engine.Result{}, &engine.RuntimeError{Kind: engine.ErrCrashed, Runtime: r.name, Message: "gone"}
	}
	t.Emit(engine.Event{Type: engine.EventAssistantMessage, Text: "seen"})
	return engine.Result{Status: engine.StatusComplete, Output: "seen"}, nil
}

func (r *seeing) got() []engine.Turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.Turn(nil), r.turns...)
}

func TestImageOnRuntimeWithoutVisionFailsBeforeTheTurn(t *testing.T) {
	blind := &seeing{name: "blind"}
	eyes := &seeing{name: "eyes", vision: true}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(blind), entry(eyes)}, Runtime: "blind"})
	im, err := engine.NewImage("shot.png", encoded(t)["image/png"])
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.RunMessage(context.Background(), engine.UserMessage{Text: "what is this?", Images: []engine.Image{im}})
	var ve *engine.VisionError
	if !errors.As(err, &ve) || engine.KindOf(err) != engine.ErrCapability {
		t.Fatalf("want a VisionError of kind capability, got %T %v", err, err)
	}
	for _, want := range []string{"an image", "runtime blind", "no vision capability", "switch to eyes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if len(j.all()) != 0 || len(blind.got()) != 0 {
		t.Fatalf("nothing may start: events %v, turns %d", j.types(), len(blind.got()))
	}
	// The same message without images runs on the same runtime.
	if _, err := s.RunTurn(context.Background(), "hello"); err != nil {
		t.Fatalf("text turn: %v", err)
	}
	if err := s.SubmitMessage(engine.UserMessage{Text: "again", Images: []engine.Image{im}}); !errors.As(err, &ve) {
		t.Fatalf("SubmitMessage must fail fast too, got %v", err)
	}
}

func TestImageReachesRuntimeAndHistory(t *testing.T) {
	eyes := &seeing{name: "eyes", vision: true}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(eyes)}})
	im, err := engine.NewImage("shot.png", encoded(t)["image/png"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunMessage(context.Background(), engine.UserMessage{Text: "what is this?", Images: []engine.Image{im}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunTurn(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	turns := eyes.got()
	if len(turns) != 2 || len(turns[0].Images) != 1 || !bytes.Equal(turns[0].Images[0].Data, im.Data) {
		t.Fatalf("the first turn carries the image: %+v", turns)
	}
	if len(turns[1].Images) != 0 || len(turns[1].History) == 0 || len(turns[1].History[0].Images) != 1 ||
		!bytes.Equal(turns[1].History[0].Images[0].Data, im.Data) {
		t.Fatalf("the next turn sees the image in its history: %+v", turns[1].History)
	}
	if ev := j.all()[0]; ev.Type != engine.EventUserMessage || len(ev.Images) != 1 || ev.Images[0].SHA256 != im.SHA256 {
		t.Fatalf("user_message carries the image: %+v", ev)
	}
}

func TestImageFailoverSkipsRuntimesWithoutVision(t *testing.T) {
	first := &seeing{name: "first", vision: true, fail: true}
	blind := &seeing{name: "blind"}
	eyes := &seeing{name: "eyes", vision: true}
	s, _ := newSession(t, engine.Config{
		Runtimes: []engine.RuntimeEntry{entry(first), entry(blind), entry(eyes)}, Runtime: "first",
		Failover: []engine.ChainLink{{Runtime: "blind"}, {Runtime: "eyes"}},
	})
	im, err := engine.NewImage("shot.png", encoded(t)["image/png"])
	if err != nil {
		t.Fatal(err)
	}
	final, err := s.RunMessage(context.Background(), engine.UserMessage{Text: "what is this?", Images: []engine.Image{im}})
	if err != nil || final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v err %v", final, err)
	}
	if len(blind.got()) != 0 {
		t.Fatal("a runtime without vision must never get the image turn")
	}
	if got := eyes.got(); len(got) != 1 || len(got[0].Images) != 1 {
		t.Fatalf("the vision runtime takes over with the image: %+v", got)
	}
}

func TestTooManyImagesRefused(t *testing.T) {
	eyes := &seeing{name: "eyes", vision: true}
	s, j := newSession(t, engine.Config{Runtimes: []engine.RuntimeEntry{entry(eyes)}})
	im, err := engine.NewImage("shot.png", encoded(t)["image/png"])
	if err != nil {
		t.Fatal(err)
	}
	many := make([]engine.Image, engine.MaxImages+1)
	for i := range many {
		many[i] = im
	}
	if _, err := s.RunMessage(context.Background(), engine.UserMessage{Text: "x", Images: many}); engine.KindOf(err) != engine.ErrInvalidArgument {
		t.Fatalf("want invalid_argument, got %v", err)
	}
	if len(j.all()) != 0 {
		t.Fatal("nothing may be emitted")
	}
}

func TestSelectForVision(t *testing.T) {
	caps := func(vision bool) engine.Capabilities {
		c := []engine.Capability{engine.CapTextCompletion, engine.CapNativeToolLoop, engine.CapFilesystemEdit, engine.CapShell}
		if vision {
			c = append(c, engine.CapVision)
		}
		return engine.Capabilities{Set: engine.NewCapSet(c...), InputPerMTok: map[bool]float64{true: 3, false: 1}[vision]}
	}
	cands := []engine.Candidate{
		{Runtime: "cheap", Capabilities: caps(false)},
		{Runtime: "gone", Capabilities: caps(true), Unavailable: "no key"},
		{Runtime: "eyes", Capabilities: caps(true)},
	}
	need := engine.NewCapSet(engine.CapVision)
	for _, st := range []engine.Strategy{engine.StrategyCapabilityMatch, engine.StrategyCostOptimized, engine.StrategyLatencyOptimized, engine.StrategyAuto} {
		c, err := engine.SelectFor(st, engine.ModeFullAutonomous, need, "cheap", cands)
		if err != nil || c.Runtime != "eyes" {
			t.Errorf("%s: want eyes, got %q %v", st, c.Runtime, err)
		}
	}
	// Without the need, cost_optimized takes the cheap one.
	if c, _ := engine.SelectFor(engine.StrategyCostOptimized, engine.ModeFullAutonomous, 0, "", cands); c.Runtime != "cheap" {
		t.Errorf("without images cost_optimized picks cheap, got %q", c.Runtime)
	}
	_, err := engine.SelectFor(engine.StrategyPreferred, engine.ModeFullAutonomous, need, "cheap", cands)
	var ve *engine.VisionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "switch to eyes") || strings.Contains(err.Error(), "gone") {
		t.Fatalf("an explicit runtime without vision is refused, naming the available ones: %v", err)
	}
	if _, err := engine.SelectFor(engine.StrategyCapabilityMatch, engine.ModeFullAutonomous, need, "", cands[:1]); !errors.Is(err, engine.ErrNoCandidate) {
		t.Fatalf("no vision runtime at all: %v", err)
	}
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
