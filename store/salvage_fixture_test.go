package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// The salvage tests build a database the way kz fills one, damage a copy
// of it in one way each, salvage it, and compare what came back with what
// went in: every row recovered must be the row that was stored, and the
// report must not claim more than it recovered nor hide a session it did
// not recover whole.

const fixtureSessions = 40

// fixture is what was stored before the damage.
type fixture struct {
	path string
	// events[session][seq] is the stored JSON payload of each event.
	events map[string]map[int64]string
	// snapshots[id] is each snapshot's content.
	snapshots map[int64][]byte
	pageSize  int
	// roots maps each table and index to its root page.
	roots map[string]int
}

// buildFixture writes fixtureSessions sessions of two turns each, with
// streamed text, tool calls with outputs of a few KB, usage, native ids,
// grants, file snapshots and artifacts, and closes the database, so that
// everything is in the main file.
func buildFixture(t *testing.T, path string) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	f := &fixture{path: path, events: map[string]map[int64]string{}, snapshots: map[int64][]byte{}, roots: map[string]int{}}
	base := time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)
	for i := range fixtureSessions {
		id := fmt.Sprintf("20251101-1200%02d-%012x", i, i)
		if err := st.CreateSession(ctx, id, "/work/p", "scripted", "m", engine.ModeFullAutonomous); err != nil {
			t.Fatal(err)
		}
		seq := int64(0)
		var batch []engine.Event
		add := func(turn int64, ev engine.Event) {
			seq++
			ev.SessionID, ev.Seq, ev.TurnID, ev.Runtime, ev.Time = id, seq, turn, "scripted", base.Add(time.Duration(i*1000+int(seq))*time.Second)
			batch = append(batch, ev)
		}
		for turn := int64(1); turn <= 2; turn++ {
			add(turn, engine.Event{Type: engine.EventUserMessage, Text: fmt.Sprintf("session %d turn %d: refactor the parser", i, turn), Model: "m"})
			add(turn, engine.Event{Type: engine.EventSessionStarted, NativeID: fmt.Sprintf("native-%d", i)})
			for k := range 3 {
				add(turn, engine.Event{Type: engine.EventTextDelta, Text: fmt.Sprintf("Looking at step %d of session %d.\n", k, i)})
				cid := fmt.Sprintf("c%d-%d", turn, k)
				add(turn, engine.Event{Type: engine.EventToolCallStarted, ToolCallID: cid, Tool: "read_file", Input: json.RawMessage(`{"path":"parser.go"}`)})
				out := strings.Repeat(fmt.Sprintf("line %d of the file read in session %d\n", rng.IntN(1000), i), 20+rng.IntN(60))
				add(turn, engine.Event{Type: engine.EventToolCallFinished, ToolCallID: cid, Tool: "read_file", Output: out})
				add(turn, engine.Event{Type: engine.EventUsageUpdated, Usage: &engine.Usage{InputTokens: 100, OutputTokens: 20}, CostUSD: 0.001, Model: "m"})
			}
			add(turn, engine.Event{Type: engine.EventAssistantMessage, Text: fmt.Sprintf("Done with turn %d of session %d.", turn, i)})
			add(turn, engine.Event{Type: engine.EventFinalResult, Status: "complete", Usage: &engine.Usage{InputTokens: 300, OutputTokens: 60}, CostUSD: 0.003, Model: "m"})
		}
		if err := st.writeBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			content := bytes.Repeat([]byte{byte(i), 0, 0xff, '\n'}, 500+rng.IntN(1000))
			if err := st.SaveSnapshot(ctx, Snapshot{SessionID: id, ChangeID: "ch" + id, Path: "parser.go", Existed: true, Content: content, Workspace: "/work/p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.SaveArtifact(ctx, id, "c1-0", []byte(strings.Repeat("artifact ", 300))); err != nil {
				t.Fatal(err)
			}
			if err := st.AddGrant(ctx, Grant{SessionID: id, Scope: "session", Tool: "bash", Pattern: "go test:*"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows, err := st.db.Query(`SELECT session_id, seq, data FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, data string
		var seq int64
		if err := rows.Scan(&id, &seq, &data); err != nil {
			t.Fatal(err)
		}
		if f.events[id] == nil {
			f.events[id] = map[int64]string{}
		}
		f.events[id][seq] = data
	}
	_ = rows.Close()
	snaps, err := st.db.Query(`SELECT id, content FROM snapshots`)
	if err != nil {
		t.Fatal(err)
	}
	for snaps.Next() {
		var id int64
		var c []byte
		if err := snaps.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		f.snapshots[id] = c
	}
	_ = snaps.Close()
	if err := st.db.QueryRow(`PRAGMA page_size`).Scan(&f.pageSize); err != nil {
		t.Fatal(err)
	}
	roots, err := st.db.Query(`SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0`)
	if err != nil {
		t.Fatal(err)
	}
	for roots.Next() {
		var name string
		var root int
		if err := roots.Scan(&name, &root); err != nil {
			t.Fatal(err)
		}
		f.roots[name] = root
	}
	_ = roots.Close()
	// Closing the last connection moves the log into the file.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the write-ahead log outlived the last connection")
	}
	return f
}

// leaves returns the leaf pages of the b-tree rooted at root, in key
// order, walking the file's pages directly.
func (f *fixture) leaves(t *testing.T, root int) []int {
	t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	var walk func(p int)
	walk = func(p int) {
		off := (p - 1) * f.pageSize
		hdr := off
		if p == 1 {
			hdr += 100
		}
		if p < 1 || off+f.pageSize > len(b) {
			t.Fatalf("page %d outside the file", p)
		}
		switch b[hdr] {
		case 10, 13:
			out = append(out, p)
		case 2, 5:
			n := int(binary.BigEndian.Uint16(b[hdr+3:]))
			for i := range n {
				cell := int(binary.BigEndian.Uint16(b[hdr+12+2*i:]))
				walk(int(binary.BigEndian.Uint32(b[off+cell:])))
			}
			walk(int(binary.BigEndian.Uint32(b[hdr+8:])))
		default:
			t.Fatalf("page %d has type %d", p, b[hdr])
		}
	}
	walk(root)
	return out
}

// garble overwrites a whole page with noise.
func (f *fixture) garble(t *testing.T, page int) {
	t.Helper()
	noise := make([]byte, f.pageSize)
	rng := rand.New(rand.NewPCG(uint64(page), 7))
	for i := range noise {
		noise[i] = byte(rng.UintN(256))
	}
	fh, err := os.OpenFile(f.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fh.Close() }()
	if _, err := fh.WriteAt(noise, int64(page-1)*int64(f.pageSize)); err != nil {
		t.Fatal(err)
	}
}

// outcome compares a salvaged database with the fixture.
type outcome struct {
	sessions, complete, snapshots int
}

// check opens the salvaged database and compares every recovered row with
// the fixture: it fails on any row that differs (garbage let through), on
// an integrity failure, and on a report that claims more sessions than
// are there or fewer incomplete ones than there are.
func (f *fixture) check(t *testing.T, rep SalvageReport) outcome {
	t.Helper()
	db, err := sql.Open("sqlite3", fileURI(f.path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var verdict string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&verdict); err != nil || verdict != "ok" {
		t.Fatalf("salvaged database: integrity %q %v", verdict, err)
	}
	var fk int
	if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil || fk != 0 {
		t.Fatalf("salvaged database: %d foreign key violations %v", fk, err)
	}
	var o outcome
	ids, err := db.Query(`SELECT id, last_seq FROM sessions`)
	if err != nil {
		t.Fatal(err)
	}
	type sess struct {
		id   string
		last int64
	}
	var list []sess
	for ids.Next() {
		var s sess
		if err := ids.Scan(&s.id, &s.last); err != nil {
			t.Fatal(err)
		}
		list = append(list, s)
	}
	_ = ids.Close()
	o.sessions = len(list)
	for _, s := range list {
		want, ok := f.events[s.id]
		if !ok {
			t.Fatalf("session %q was not in the fixture", s.id)
		}
		got := map[int64]string{}
		rows, err := db.Query(`SELECT seq, data FROM events WHERE session_id = ?`, s.id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var seq int64
			var data string
			if err := rows.Scan(&seq, &data); err != nil {
				t.Fatal(err)
			}
			got[seq] = data
		}
		_ = rows.Close()
		for seq, data := range got {
			if want[seq] != data {
				t.Fatalf("session %s event %d differs from what was stored:\n%.200s\nwant\n%.200s", s.id, seq, data, want[seq])
			}
		}
		if len(got) == len(want) {
			o.complete++
		}
		if s.last < int64(len(want)) && len(got) == len(want) {
			t.Errorf("session %s: last_seq %d below its %d events", s.id, s.last, len(want))
		}
	}
	snaps, err := db.Query(`SELECT id, content FROM snapshots`)
	if err != nil {
		t.Fatal(err)
	}
	for snaps.Next() {
		var id int64
		var c []byte
		if err := snaps.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c, f.snapshots[id]) {
			t.Fatalf("snapshot %d differs from what was stored", id)
		}
		o.snapshots++
	}
	_ = snaps.Close()
	if rep.Sessions != o.sessions {
		t.Errorf("report says %d sessions recovered, the database holds %d", rep.Sessions, o.sessions)
	}
	if rep.Snapshots != o.snapshots {
		t.Errorf("report says %d snapshots recovered, the database holds %d", rep.Snapshots, o.snapshots)
	}
	if incomplete := o.sessions - o.complete; rep.Incomplete < incomplete {
		t.Errorf("report says %d sessions incomplete, %d are", rep.Incomplete, incomplete)
	}
	if rep.Sessions+rep.Lost > fixtureSessions {
		t.Errorf("report: %d recovered + %d lost > %d sessions", rep.Sessions, rep.Lost, fixtureSessions)
	}
	if _, err := os.Stat(rep.Kept); err != nil {
		t.Errorf("the damaged file was not kept: %v", err)
	}
	return o
}
