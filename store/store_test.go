package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openTemp(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "data", "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestOpenSetsModesAndPragmasOnEveryConnection(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	// Hold several connections at once so the pool must open new ones.
	var conns []*sql.Conn
	for range 4 {
		c, err := st.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var fk, busy int
		var jm, sync string
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&jm); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if fk != 1 || busy != 5000 || jm != "wal" || sync != "1" {
			t.Errorf("connection %d: foreign_keys=%d busy_timeout=%d journal_mode=%s synchronous=%s", i, fk, busy, jm, sync)
		}
		_ = c.Close()
	}
	if err := st.CreateSession(ctx, "s1", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		fi, err := os.Stat(st.Path() + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %o", suffix, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(filepath.Dir(st.Path())); fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %o", fi.Mode().Perm())
	}
	// Foreign keys hold: an event for a missing session is refused.
	if err := st.writeBatch(ctx, []engine.Event{{Type: engine.EventTextDelta, SessionID: "ghost", Seq: 1, Time: time.Now()}}); err == nil {
		t.Error("event of a missing session accepted")
	}
}

// TestWriteTransactionsAreImmediate shows _txlock=immediate on pooled
// connections: a transaction takes the write lock when it begins, so a
// second writer waits at BEGIN (where the busy timeout applies) instead of
// failing later at its first write with SQLITE_BUSY, which a deferred
// transaction cannot retry.
func TestWriteTransactionsAreImmediate(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	first, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback() }()
	began := make(chan error, 1)
	go func() {
		second, err := st.db.BeginTx(ctx, nil)
		if err == nil {
			err = second.Commit()
		}
		began <- err
	}()
	select {
	case err := <-began:
		t.Fatalf("a second transaction began while the first held the write lock (%v): transactions are deferred", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-began:
		if err != nil {
			t.Fatalf("second transaction after the first ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second transaction never began")
	}
}

func TestMigrationsAreIdempotent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kz.db")
	for range 3 {
		st, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := st.db.QueryRow("SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob("migrations/*.sql")
		if n != len(files) {
			t.Fatalf("%d migrations recorded, %d files", n, len(files))
		}
		_ = st.Close()
	}
}

func ev(session string, seq int64, typ engine.EventType, text string) engine.Event {
	return engine.Event{Type: typ, SessionID: session, Seq: seq, TurnID: 1, Text: text, Time: time.Now(), Runtime: "r"}
}

func TestWriterBatchesAndFlushes(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	seq := int64(0)
	next := func() int64 { seq++; return seq }
	_ = w.Append(ev("s", next(), engine.EventUserMessage, "go"))
	var want strings.Builder
	for i := range 20000 {
		s := fmt.Sprintf("%d,", i)
		want.WriteString(s)
		_ = w.Append(ev("s", next(), engine.EventTextDelta, s))
		if i%5000 == 0 {
			_ = w.Append(ev("s", next(), engine.EventToolCallStarted, ""))
		}
	}
	_ = w.Append(ev("s", next(), engine.EventAssistantMessage, "done"))
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var rows int
	var maxSeq int64
	err := st.Events(ctx, "s", func(e engine.Event) error {
		rows++
		maxSeq = e.Seq
		if e.Type == engine.EventTextDelta {
			text.WriteString(e.Text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != want.String() {
		t.Fatal("delta text lost or reordered")
	}
	if maxSeq != seq {
		t.Fatalf("last persisted seq %d, want %d", maxSeq, seq)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.batches >= 1000 {
		t.Fatalf("%d transactions for %d events: not batched", w.batches, seq)
	}
	t.Logf("%d events in %d rows and %d transactions", seq, rows, w.batches)
}

func TestMustDeliverEventsAreWrittenAtOnce(t *testing.T) {
	old := batchDelay
	batchDelay = time.Hour
	defer func() { batchDelay = old }()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	defer func() { _ = w.Close() }()
	_ = w.Append(ev("s", 1, engine.EventTextDelta, "a"))
	_ = w.Append(ev("s", 2, engine.EventTextDelta, "b"))
	for _, typ := range []engine.EventType{engine.EventError, engine.EventPermissionRequested, engine.EventFinalResult} {
		seqWant := int64(3)
		switch typ {
		case engine.EventPermissionRequested:
			seqWant = 4
		case engine.EventFinalResult:
			seqWant = 5
		}
		_ = w.Append(ev("s", seqWant, typ, "x"))
		deadline := time.Now().Add(20 * time.Second)
		for {
			var n int
			if err := st.db.QueryRow("SELECT COUNT(*) FROM events WHERE session_id = 's' AND seq = ?", seqWant).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s waited for the batch delay", typ)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func TestSecretsAreRedactedAtPersistence(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	secrets := []string{
		"sk-ant-api03-" + strings.Repeat("a1B2", 20),
		"sk-proj-" + strings.Repeat("Zx9", 15),
		"AKIAIOSFODNN7EXAMPLE",
		"ghp_" + strings.Repeat("x", 36),
		"github_pat_" + strings.Repeat("A1", 20),
		"xoxb-1234567890-abcdefghij",
		"AIza" + strings.Repeat("b", 35),
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
	}
	bearer := "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123"
	all := strings.Join(secrets, " and ") + " " + bearer
	w := st.NewWriter()
	_ = w.Append(ev("s", 1, engine.EventUserMessage, "my key is "+all))
	e := ev("s", 2, engine.EventToolCallStarted, "")
	e.ToolCallID, e.Tool, e.Input = "c1", "bash", json.RawMessage(`{"command":"curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123' x"}`)
	_ = w.Append(e)
	f := ev("s", 3, engine.EventToolCallFinished, "")
	f.ToolCallID, f.Output = "c1", "env: OPENAI_API_KEY="+secrets[1]
	_ = w.Append(f)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A file snapshot keeps its bytes exactly: undo must restore them.
	content := []byte("API_KEY=" + secrets[0] + "\n")
	if err := st.SaveSnapshot(ctx, Snapshot{SessionID: "s", ChangeID: "ch1", Path: ".env.example", Existed: true, Content: content, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	var dump strings.Builder
	for _, q := range []string{"SELECT data FROM events", "SELECT text || input || output FROM transcript", "SELECT prompt FROM turns", "SELECT title FROM sessions"} {
		rows, err := st.db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			dump.WriteString(s)
		}
		_ = rows.Close()
	}
	for _, s := range append(secrets, "abcdefghijklmnopqrstuvwxyz0123", "b3BlbnNzaC1rZXktdjEAAAAA") {
		if strings.Contains(dump.String(), s) {
			t.Errorf("secret persisted: %.20s…", s)
		}
	}
	if !strings.Contains(dump.String(), Redacted) || !strings.Contains(dump.String(), "Bearer "+Redacted) {
		t.Error("no redaction marker")
	}
	// A tool result kept whole as an artifact is tool output, not a file:
	// it is redacted like the event that refers to it.
	ref, err := st.SaveArtifact(ctx, "s", "c1", []byte("big output\nOPENAI_API_KEY="+secrets[1]+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if art, err := st.Artifact(ctx, ref); err != nil || strings.Contains(string(art), secrets[1]) || !strings.Contains(string(art), "OPENAI_API_KEY="+Redacted) {
		t.Fatalf("artifact %q %v", art, err)
	}
	snaps, err := st.Snapshots(ctx, "ch1")
	if err != nil || len(snaps) != 1 || string(snaps[0].Content) != string(content) || snaps[0].Mode != 0o644 {
		t.Fatalf("snapshot changed: %v %+v", err, snaps)
	}
	if got := Redact("plain text without secrets, sk- short"); got != "plain text without secrets, sk- short" {
		t.Errorf("false positive: %q", got)
	}
}

func deadPID(t *testing.T) int {
	t.Helper()
	c := osexec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func TestOpenClosesTurnsOfDeadProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kz.db")
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"dead", "live"} {
		if err := st.CreateSession(ctx, id, "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
			t.Fatal(err)
		}
		start := ev(id, 3, engine.EventToolCallStarted, "")
		start.ToolCallID, start.Tool = "c1", "bash"
		if err := st.writeBatch(ctx, []engine.Event{ev(id, 1, engine.EventUserMessage, "go"), ev(id, 2, engine.EventTextDelta, "partial an"), start, ev(id, 4, engine.EventTextDelta, "swer")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.db.Exec("UPDATE turns SET pid = ? WHERE session_id = 'dead'", deadPID(t)); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	turns, _ := st.Turns(ctx, "dead")
	if len(turns) != 1 || turns[0].Status != "interrupted" {
		t.Fatalf("dead turn = %+v", turns)
	}
	tr, _ := st.Transcript(ctx, "dead")
	var tool, partial bool
	for _, e := range tr {
		if e.Kind == engine.EntryToolCall && e.Status == engine.ToolStatusInterrupted && e.Output == engine.InterruptedNotRerun {
			tool = true
		}
		if e.Kind == engine.EntryAssistant && e.Status == "partial" && e.Text == "partial answer" {
			partial = true
		}
	}
	if !tool || !partial {
		t.Fatalf("transcript after recovery = %+v", tr)
	}
	p, err := st.Prior(ctx, "dead")
	if err != nil || p.LastSeq != 7 || p.LastTurn != 1 {
		t.Fatalf("prior = %+v, %v", p, err)
	}
	if turns, _ := st.Turns(ctx, "live"); turns[0].Status != "" {
		t.Fatalf("a live process's turn was closed: %+v", turns)
	}
	if out, err := st.IntegrityCheck(ctx); err != nil || out != "ok" {
		t.Fatalf("integrity %q %v", out, err)
	}
}

func TestCorruptDatabaseIsMovedAside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kz.db")
	garbage := []byte(strings.Repeat("this is not sqlite ", 500))
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if !strings.Contains(st.Recovered, "corrupt") {
		t.Fatalf("recovered = %q", st.Recovered)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("aside files %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != string(garbage) {
		t.Fatal("the corrupt file was not kept as it was")
	}
	if err := st.CreateSession(context.Background(), "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatalf("fresh database unusable: %v", err)
	}
}

func TestUnreadableDatabaseIsAnErrorNotMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kz.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Fatal("unreadable database was moved")
	}
}

func TestSessionLookupByPrefix(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"20260101-aaa", "20260101-aab", "20260202-bbb"} {
		if err := st.CreateSession(ctx, id, "/w", "r", "m", engine.ModeAnalysisOnly); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := st.Session(ctx, "20260202"); err != nil || s.ID != "20260202-bbb" {
		t.Fatalf("%v %v", s, err)
	}
	if _, err := st.Session(ctx, "20260101-aa"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := st.Session(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := st.Session(ctx, "%"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("wildcard matched: %v", err)
	}
	if err := st.DeleteSession(ctx, "20260202-bbb"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, "20260202-bbb"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("double delete: %v", err)
	}
}

func TestRenameSession(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	if err := st.RenameSession(ctx, "s", "a better title"); err != nil {
		t.Fatal(err)
	}
	if si, _ := st.Session(ctx, "s"); si.Title != "a better title" {
		t.Fatalf("title %q", si.Title)
	}
	if err := st.RenameSession(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}
