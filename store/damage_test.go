package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestDamageFoundAfterOpenMovesTheDatabaseAsideNextTime: damage in pages
// that opening does not read shows only when a session is read. That read
// fails with a clear error; the next Open moves the database aside (the
// file is kept) and starts a fresh one, instead of failing every time.
func TestDamageFoundAfterOpenMovesTheDatabaseAsideNextTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kz.db")
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, "s1", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	// Large events fill most of the file with their pages, after the
	// schema and the small tables that opening reads.
	batch := []engine.Event{ev("s1", 1, engine.EventUserMessage, "go")}
	for i := int64(2); i < 300; i++ {
		batch = append(batch, ev("s1", i, engine.EventToolCallProgress, strings.Repeat("x", 8000)))
	}
	batch = append(batch, engine.Event{Type: engine.EventFinalResult, SessionID: "s1", Seq: 300, TurnID: 1, Status: "complete", Usage: &engine.Usage{}})
	if err := st.writeBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Overwrite whole pages in the middle of the file.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	for off := len(data) / 2 / page * page; off < len(data)*3/4; off++ {
		data[off] = 0xff
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("open must succeed, the damage is in pages it does not read: %v", err)
	}
	if st.Recovered != "" {
		t.Fatalf("recovered at open: %s", st.Recovered)
	}
	err = st.Events(ctx, "s1", func(engine.Event) error { return nil })
	if err == nil || !isCorrupt(err) || !strings.Contains(err.Error(), "the next kz moves it aside") {
		t.Fatalf("reading the damaged session: %v", err)
	}
	if _, err := os.Stat(path + damagedSuffix); err != nil {
		t.Fatalf("no damage marker: %v", err)
	}
	_ = st.Close()

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if !strings.Contains(st.Recovered, "an earlier kz found it damaged") || !strings.Contains(st.Recovered, "malformed") {
		t.Fatalf("Recovered = %q", st.Recovered)
	}
	if list, err := st.ListSessions(ctx, "", 10); err != nil || len(list) != 0 {
		t.Fatalf("fresh database lists %v, %v", list, err)
	}
	if _, err := os.Stat(path + damagedSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the marker stayed beside the fresh database: %v", err)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	var db, mark bool
	for _, a := range aside {
		db = db || !strings.Contains(a, "-wal") && !strings.Contains(a, "-shm") && !strings.HasSuffix(a, damagedSuffix)
		mark = mark || strings.HasSuffix(a, damagedSuffix)
	}
	if !db || !mark {
		t.Fatalf("moved aside: %v, want the database and its marker", aside)
	}
}

// A marker left beside a database that no longer exists is dropped.
func TestDamageMarkerWithoutDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kz.db")
	if err := os.WriteFile(path+damagedSuffix, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if st.Recovered != "" {
		t.Fatalf("Recovered = %q", st.Recovered)
	}
	if _, err := os.Stat(path + damagedSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker kept: %v", err)
	}
}
