package store

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// testImage is a PNG signature followed by bytes that look like a secret
// and invalid UTF-8: the store must keep them exactly, unredacted.
func testImage(t *testing.T, name string, tail string) engine.Image {
	t.Helper()
	data := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"), "AKIAIOSFODNN7EXAMPLE password=hunter2 "+tail...)
	im, err := engine.NewImage(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// TestImagesSurviveAReopen: the bytes of a user message's images go to
// the artifacts table in the message's transaction, the event's JSON
// keeps only their description and reference, and the transcript of the
// reopened database gives them back byte for byte, for the runtime that
// resumes the session.
func TestImagesSurviveAReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kz.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	a, b := testImage(t, "a.png", "first"), testImage(t, "b.png", "second")
	w := st.NewWriter()
	msg := engine.Event{Type: engine.EventUserMessage, SessionID: "s", Seq: 1, TurnID: 1, Text: "compare", Images: []engine.Image{a, b, a}}
	for _, e := range []engine.Event{msg,
		{Type: engine.EventAssistantMessage, SessionID: "s", Seq: 2, TurnID: 1, Text: "they differ"},
		{Type: engine.EventUserMessage, SessionID: "s", Seq: 3, TurnID: 2, Text: "no image here"},
	} {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if msg.Images[0].Ref != "" {
		t.Fatal("the caller's event must not be changed by the store")
	}
	_ = w.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	var data string
	if err := st.db.QueryRowContext(ctx, `SELECT data FROM events WHERE session_id = 's' AND seq = 1`).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if len(data) > 1024 || bytes.Contains([]byte(data), []byte("AKIA")) {
		t.Fatalf("the event's JSON must not hold the bytes (%d bytes): %s", len(data), data)
	}
	var rows int
	if err := st.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifacts WHERE session_id = 's' AND tool_call_id LIKE 'image:%'`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("one artifact per distinct image of the message: %d, %v", rows, err)
	}
	tr, err := st.Transcript(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 3 || len(tr[0].Images) != 3 || len(tr[2].Images) != 0 {
		t.Fatalf("transcript: %+v", tr)
	}
	for i, want := range []engine.Image{a, b, a} {
		got := tr[0].Images[i]
		if !bytes.Equal(got.Data, want.Data) || got.MediaType != "image/png" || got.Name != want.Name || got.SHA256 != want.SHA256 || got.Ref == "" {
			t.Errorf("image %d: got %+v", i, got)
		}
	}
	var events []engine.Event
	if err := st.Events(ctx, "s", func(e engine.Event) error { events = append(events, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if im := events[0].Images; len(im) != 3 || im[1].Name != "b.png" || im[1].Size != b.Size || im[1].Data != nil {
		t.Fatalf("the stored event describes the images without their bytes: %+v", im)
	}
}
