package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/internal/attach"
)

// imageSession is a fake session that also takes messages with images.
type imageSession struct {
	*fakeSession
	sent []engine.UserMessage
	err  error
}

func (s *imageSession) SubmitMessage(msg engine.UserMessage) error {
	s.record("SubmitMessage", msg)
	if s.err != nil {
		return s.err
	}
	s.sent = append(s.sent, msg)
	return nil
}

// wsReader reads mentions and images of a workspace as internal/app's
// reader does, without the gate: text files whole, images through
// attach.Image (an os.Root, regular files, the size cap, sniffing).
type wsReader struct{ ws string }

func (r wsReader) ReadMention(_ context.Context, path string) (string, error) {
	b, err := os.ReadFile(filepath.Join(r.ws, path))
	return string(b), err
}

func (r wsReader) ReadImage(_ context.Context, path string) (engine.Image, error) {
	return attach.Image(r.ws, path)
}

// imageWorkspace holds shot.png (a real PNG), notes.txt and, outside it,
// "my shot.png" (a path with a space, as a dragged file often has).
func imageWorkspace(t *testing.T) (ws, outside string, img []byte) {
	t.Helper()
	ws, dir := t.TempDir(), t.TempDir()
	img = enginetest.PNG(t, 40, 30)
	outside = filepath.Join(dir, "my shot.png")
	for p, data := range map[string][]byte{filepath.Join(ws, "shot.png"): img, filepath.Join(ws, "notes.txt"): []byte("remember\n"), outside: img} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside, img
}

func imageModel(t *testing.T, ws string, s Session) *Model {
	t.Helper()
	m := testModel(t, s, 100, 30)
	m.ext.workspace, m.ext.mentions = ws, wsReader{ws}
	return m
}

// TestPastedImagePathsBecomeChips: a pasted path to an image file, in any
// form a terminal pastes a dragged file, becomes a chip above the input
// instead of text; backspace on the empty input removes the last chip;
// enter sends the text with the images that are left.
func TestPastedImagePathsBecomeChips(t *testing.T) {
	ws, outside, data := imageWorkspace(t)
	s := &imageSession{fakeSession: newFake()}
	m := imageModel(t, ws, s)
	for _, paste := range []string{"shot.png", "'" + outside + "'", strings.ReplaceAll(outside, " ", `\ `), "file://" + strings.ReplaceAll(outside, " ", "%20")} {
		m.update(tea.PasteMsg{Content: paste})
	}
	if m.input.Value() != "" || len(m.attached) != 4 {
		t.Fatalf("input %q, %d attachments", m.input.Value(), len(m.attached))
	}
	label := (&engine.Image{Name: "my shot.png", Size: len(data)}).Label()
	if scr := m.screen(); !strings.Contains(scr, "[image: shot.png "+engine.FormatBytes(int64(len(data)))+"] "+label) ||
		!strings.Contains(scr, "backspace on an empty input removes the last image") {
		t.Fatalf("chips not shown:\n%s", scr)
	}
	m.press("backspace", "backspace")
	if len(m.attached) != 2 {
		t.Fatalf("backspace removes one chip each: %d left", len(m.attached))
	}
	m.typeText("what is this?")
	m.press("backspace")
	if len(m.attached) != 2 || m.input.Value() != "what is this" {
		t.Fatalf("backspace in text edits the text: %q, %d chips", m.input.Value(), len(m.attached))
	}
	m.press("enter")
	if len(s.sent) != 1 || s.sent[0].Text != "what is this" || len(s.sent[0].Images) != 2 ||
		!bytes.Equal(s.sent[0].Images[0].Data, data) || s.sent[0].Images[1].Name != "my shot.png" {
		t.Fatalf("sent %+v", s.sent)
	}
	if len(m.attached) != 0 || strings.Contains(m.screen(), "[image:") {
		t.Fatal("the chips go with the message")
	}
}

// TestPastedTextStaysText: a paste that is not a path to an image file is
// typed text, as before.
func TestPastedTextStaysText(t *testing.T) {
	ws, _, _ := imageWorkspace(t)
	m := imageModel(t, ws, &imageSession{fakeSession: newFake()})
	for _, paste := range []string{"notes.txt", " missing.png", "two\nlines.png", "hello "} {
		m.update(tea.PasteMsg{Content: paste})
	}
	if want := "notes.txt missing.pngtwo\nlines.pnghello "; m.input.Value() != want || len(m.attached) != 0 {
		t.Fatalf("input %q (want %q), %d attachments", m.input.Value(), want, len(m.attached))
	}
}

// TestImageMentionAttachesInsteadOfInlining: an @mention of an image file
// attaches it, and a text file is still inlined, in the same message.
func TestImageMentionAttachesInsteadOfInlining(t *testing.T) {
	ws, _, data := imageWorkspace(t)
	s := &imageSession{fakeSession: newFake()}
	m := imageModel(t, ws, s)
	m.typeText("compare @shot.png with @notes.txt")
	m.press("enter")
	if len(s.sent) != 1 {
		t.Fatalf("calls %+v", s.Calls())
	}
	msg := s.sent[0]
	if len(msg.Images) != 1 || !bytes.Equal(msg.Images[0].Data, data) || msg.Images[0].MediaType != "image/png" {
		t.Fatalf("images %+v", msg.Images)
	}
	if !strings.Contains(msg.Text, `<file path="notes.txt">`) || strings.Contains(msg.Text, `<file path="shot.png">`) || strings.Contains(msg.Text, "\x89PNG") {
		t.Fatalf("text %q", msg.Text)
	}
	// Without images, the plain Submit path is unchanged.
	m.typeText("just @notes.txt")
	m.press("enter")
	if c := s.Calls(); c[len(c)-1].method != "Submit" {
		t.Fatalf("a text-only message goes through Submit: %+v", c[len(c)-1])
	}
}

// TestRefusedImageMessageKeepsTheInput: a runtime without vision refuses
// the message; the TUI says why and puts the text and the chips back.
func TestRefusedImageMessageKeepsTheInput(t *testing.T) {
	ws, _, _ := imageWorkspace(t)
	s := &imageSession{fakeSession: newFake(), err: &engine.VisionError{Runtime: "alpha", Images: 1, Capable: []string{"beta"}}}
	m := imageModel(t, ws, s)
	m.update(tea.PasteMsg{Content: "shot.png"})
	m.typeText("what is it?")
	m.press("enter")
	scr := m.screen()
	if !strings.Contains(scr, "could not send: the message has an image, but runtime alpha has no vision capability") || !strings.Contains(scr, "beta, or send the message without images") {
		t.Fatalf("no notice:\n%s", scr)
	}
	if m.input.Value() != "what is it?" || len(m.attached) != 1 {
		t.Fatalf("input %q, %d chips", m.input.Value(), len(m.attached))
	}
	// A session that takes no images says so, and keeps the input too.
	m2 := imageModel(t, ws, newFake())
	m2.update(tea.PasteMsg{Content: "shot.png"})
	m2.typeText("x")
	m2.press("enter")
	if !strings.Contains(m2.screen(), "this session takes no images") || len(m2.attached) != 1 {
		t.Fatalf("text-only session:\n%s", m2.screen())
	}
}

// TestImageMessageQueuedWhileATurnRuns: a message with images typed while
// a turn runs is queued with its images, like text; it is sent whole when
// the turn ends, and an interrupt gives back its text and its chips.
func TestImageMessageQueuedWhileATurnRuns(t *testing.T) {
	ws, _, data := imageWorkspace(t)
	s := &imageSession{fakeSession: newFake()}
	m := imageModel(t, ws, s)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "first"})
	m.update(tea.PasteMsg{Content: "shot.png"})
	m.typeText("later")
	m.press("enter")
	if len(s.sent) != 0 || m.input.Value() != "" || len(m.attached) != 0 || len(m.queue) != 1 {
		t.Fatalf("sent %d, input %q, chips %d, queue %d", len(s.sent), m.input.Value(), len(m.attached), len(m.queue))
	}
	if !strings.Contains(m.screen(), "queued: later [1 image]") {
		t.Fatalf("queued message not shown with its image:\n%s", m.screen())
	}
	// An image alone is a message too.
	m.update(tea.PasteMsg{Content: "shot.png"})
	m.press("enter")
	if len(m.queue) != 2 || !strings.Contains(m.screen(), "queued: [1 image]") {
		t.Fatalf("queue %d:\n%s", len(m.queue), m.screen())
	}
	m.feed(engine.Event{Type: engine.EventFinalResult, TurnID: 1, Status: "complete"})
	if len(s.sent) != 1 || s.sent[0].Text != "later" || len(s.sent[0].Images) != 1 || !bytes.Equal(s.sent[0].Images[0].Data, data) {
		t.Fatalf("the queued message was not sent with its image: %+v", s.sent)
	}
	// The second waits for its own turn; an interrupt of that turn gives
	// its image back as a chip.
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 2, Text: "later"})
	m.typeText("third")
	m.update(tea.PasteMsg{Content: "shot.png"})
	m.press("enter")
	m.press("esc")
	m.feed(engine.Event{Type: engine.EventFinalResult, TurnID: 2, Status: "interrupted"})
	if len(s.sent) != 1 || m.input.Value() != "third" || len(m.attached) != 2 || len(m.queue) != 0 {
		t.Fatalf("after the interrupt: sent %d, input %q, chips %d, queue %d", len(s.sent), m.input.Value(), len(m.attached), len(m.queue))
	}
}

// TestTranscriptShowsAttachedImages: the prompt's images are listed under
// it, from the event alone (a reopened session shows them too).
func TestTranscriptShowsAttachedImages(t *testing.T) {
	m := testModel(t, newFake(), 80, 20)
	m.feed(engine.Event{Type: engine.EventUserMessage, TurnID: 1, Text: "what is this?",
		Images: []engine.Image{{MediaType: "image/png", Name: "shot.png", Size: 120 * 1024}, {MediaType: "image/jpeg", Size: 3 << 20}}})
	for _, want := range []string{"› what is this?", "  [image: shot.png 120 KB]", "  [image: jpeg 3.0 MB]"} {
		if !strings.Contains(m.screen(), want) {
			t.Errorf("screen lacks %q:\n%s", want, m.screen())
		}
	}
	for _, w := range goldenWidths {
		rc := goldenCtx(w)
		it := &item{kind: kindUser, text: "Why is the button cut off? See the screenshot.", images: imageLabels([]engine.Image{{MediaType: "image/png", Name: "button.png", Size: 48213}})}
		golden(t, "user_images", w, strings.Join(it.lines(rc), "\n"))
	}
}
