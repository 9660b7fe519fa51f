package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestSalvageEachKindOfDamage damages a copy of the fixture in one way
// each, salvages it, and checks every recovered row against what was
// stored (see fixture.check). The counts are logged: go test -v -run
// TestSalvageEachKindOfDamage ./store/ prints what each kind of damage
// costs.
func TestSalvageEachKindOfDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	orig := buildFixture(t, filepath.Join(t.TempDir(), "kz.db"))
	pristine, err := os.ReadFile(orig.path)
	if err != nil {
		t.Fatal(err)
	}
	type damage struct {
		name  string
		do    func(t *testing.T, f *fixture)
		check func(t *testing.T, rep SalvageReport, o outcome)
	}
	truncate := func(frac float64) func(*testing.T, *fixture) {
		return func(t *testing.T, f *fixture) {
			n := int64(float64(len(pristine)) * frac)
			if frac > 0.5 && frac < 0.6 {
				n += 1234 // not on a page boundary
			}
			if err := os.Truncate(f.path, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	leafOf := func(table string) func(*testing.T, *fixture) {
		return func(t *testing.T, f *fixture) {
			leaves := f.leaves(t, f.roots[table])
			f.garble(t, leaves[len(leaves)/2])
		}
	}
	allThere := func(t *testing.T, rep SalvageReport, o outcome) {
		if rep.Sessions != fixtureSessions || rep.Lost != 0 || o.complete != fixtureSessions {
			t.Errorf("want every session back whole: %+v, %d complete", rep, o.complete)
		}
	}
	some := func(t *testing.T, rep SalvageReport, o outcome) {
		if rep.Sessions == 0 || rep.Unreadable {
			t.Errorf("nothing recovered: %+v", rep)
		}
	}
	kinds := []damage{
		{"truncated at 90%", truncate(0.9), some},
		{"truncated mid-page at 55%", truncate(0.55), some},
		{"truncated at 25%", truncate(0.25), some},
		{"garbled header", func(t *testing.T, f *fixture) {
			fh, err := os.OpenFile(f.path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fh.Close() }()
			if _, err := fh.WriteAt([]byte(strings.Repeat("\xde\xad", 50)), 0); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, rep SalvageReport, o outcome) {
			allThere(t, rep, o)
			if !rep.HeaderRebuilt || rep.Incomplete != 0 {
				t.Errorf("header: %+v", rep)
			}
		}},
		{"garbled page in sessions", leafOf("sessions"), func(t *testing.T, rep SalvageReport, o outcome) {
			// Every session comes back (its row rebuilt from its
			// events and turns), marked incomplete where rebuilt.
			allThere(t, rep, o)
			if rep.Incomplete == 0 {
				t.Errorf("rebuilt sessions not reported incomplete: %+v", rep)
			}
		}},
		{"garbled page in events", leafOf("events"), func(t *testing.T, rep SalvageReport, o outcome) {
			if rep.Sessions != fixtureSessions || rep.Lost != 0 || o.complete == fixtureSessions || o.complete < fixtureSessions-3 {
				t.Errorf("events: %+v, %d complete", rep, o.complete)
			}
		}},
		{"garbled interior page of events", func(t *testing.T, f *fixture) { f.garble(t, f.roots["events"]) }, some},
		{"garbled page in turns", leafOf("turns"), allThere},
		{"garbled page in transcript", leafOf("transcript"), allThere},
		{"garbled page in native_sessions", leafOf("native_sessions"), allThere},
		{"garbled page in usage", leafOf("usage"), allThere},
		{"garbled page in grants", leafOf("grants"), allThere},
		{"garbled page in snapshots", leafOf("snapshots"), func(t *testing.T, rep SalvageReport, o outcome) {
			allThere(t, rep, o)
			if o.snapshots >= len(orig.snapshots) {
				t.Errorf("snapshots: %d of %d back from a garbled page", o.snapshots, len(orig.snapshots))
			}
		}},
		{"garbled page in artifacts", leafOf("artifacts"), allThere},
		{"garbled index page", leafOf("transcript_session"), allThere},
		{"empty file", func(t *testing.T, f *fixture) {
			if err := os.Truncate(f.path, 0); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, rep SalvageReport, o outcome) {
			if !rep.Unreadable || rep.Sessions != 0 || !strings.Contains(rep.String(), "nothing in it could be read") {
				t.Errorf("empty: %s", rep)
			}
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			f := *orig
			f.path = filepath.Join(t.TempDir(), "kz.db")
			if err := os.WriteFile(f.path, pristine, 0o600); err != nil {
				t.Fatal(err)
			}
			k.do(t, &f)
			rep, err := Salvage(ctx, f.path, "test damage")
			if err != nil {
				t.Fatal(err)
			}
			o := f.check(t, rep)
			k.check(t, rep, o)
			t.Logf("%s: recovered %d sessions (%d whole, %d reported incomplete), lost %d, %d of %d snapshots, %d events, %d stretches skipped",
				k.name, rep.Sessions, o.complete, rep.Incomplete, rep.Lost, o.snapshots, len(orig.snapshots), rep.Events, rep.Skipped)
			// The salvaged database is an ordinary one for the next kz.
			st, err := Open(ctx, f.path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Recovered != "" {
				t.Errorf("the salvaged database was found damaged again: %s", st.Recovered)
			}
			if list, err := st.ListSessions(ctx, "", 0); err != nil || len(list) != rep.Sessions {
				t.Errorf("list after salvage: %d sessions, %v", len(list), err)
			}
			_ = st.Close()
		})
	}
}

// TestOpenSalvagesDamageFoundEarlier: damage in pages that opening does not
// read shows when a session is read. That read fails with a clear error
// and leaves a marker; the next Open salvages the database: the sessions
// that can be read are all there, the damaged file is kept, and Recovered
// says in one line what was recovered and lost.
func TestOpenSalvagesDamageFoundEarlier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := buildFixture(t, filepath.Join(t.TempDir(), "kz.db"))
	leaves := f.leaves(t, f.roots["events"])
	f.garble(t, leaves[len(leaves)/2])
	st, err := Open(ctx, f.path)
	if err != nil {
		t.Fatalf("open must succeed, the damage is in pages it does not read: %v", err)
	}
	if st.Recovered != "" {
		t.Fatalf("recovered at open: %s", st.Recovered)
	}
	var failed error
	for id := range f.events {
		if err := st.Events(ctx, id, func(engine.Event) error { return nil }); err != nil {
			failed = err
		}
	}
	if failed == nil || !isCorrupt(failed) || !strings.Contains(failed.Error(), "kz doctor --salvage") {
		t.Fatalf("reading the damaged session: %v", failed)
	}
	if _, err := os.Stat(f.path + damagedSuffix); err != nil {
		t.Fatalf("no damage marker: %v", err)
	}
	_ = st.Close()

	st, err = Open(ctx, f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	for _, want := range []string{"was damaged (an earlier kz found it damaged", "malformed", "recovered 40 sessions (", "lost 0 sessions", "kept as " + f.path + ".corrupt-"} {
		if !strings.Contains(st.Recovered, want) {
			t.Errorf("Recovered = %q, lacks %q", st.Recovered, want)
		}
	}
	if strings.Contains(st.Recovered, "\n") {
		t.Errorf("Recovered is more than one line: %q", st.Recovered)
	}
	if list, err := st.ListSessions(ctx, "", 0); err != nil || len(list) != fixtureSessions {
		t.Fatalf("after the salvage: %d sessions, %v", len(list), err)
	}
	if _, err := os.Stat(f.path + damagedSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the marker stayed beside the salvaged database: %v", err)
	}
	aside, _ := filepath.Glob(f.path + ".corrupt-*")
	var db, mark bool
	for _, a := range aside {
		db = db || !strings.Contains(a, "-wal") && !strings.Contains(a, "-shm") && !strings.HasSuffix(a, damagedSuffix)
		mark = mark || strings.HasSuffix(a, damagedSuffix)
	}
	if !db || !mark {
		t.Fatalf("kept: %v, want the damaged database and its marker", aside)
	}
}

// TestOpenSaysWhatItFoundInAnEmptyOrForeignFile: an empty file and a file
// that is not a database are set aside with a line saying so; an SQLite
// database of another program is refused and left untouched.
func TestOpenSaysWhatItFoundInAnEmptyOrForeignFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty", "kz.db")
	if err := os.MkdirAll(filepath.Dir(empty), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Recovered, "empty file (0 bytes)") || !strings.Contains(st.Recovered, "kept as") {
		t.Errorf("empty: %q", st.Recovered)
	}
	_ = st.Close()

	text := filepath.Join(dir, "text", "kz.db")
	if err := os.MkdirAll(filepath.Dir(text), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte(strings.Repeat("notes, not a database\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err = Open(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Recovered, "not a database") || !strings.Contains(st.Recovered, `"notes, not a dat`) || !strings.Contains(st.Recovered, "kept as") {
		t.Errorf("text: %q", st.Recovered)
	}
	_ = st.Close()

	other := filepath.Join(dir, "other", "kz.db")
	if err := os.MkdirAll(filepath.Dir(other), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := createForeign(other); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(other)
	_, err = Open(ctx, other)
	var fe *ForeignError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not kz's (its tables: photos)") {
		t.Fatalf("foreign: %v", err)
	}
	if after, _ := os.ReadFile(other); string(after) != string(before) {
		t.Fatal("kz changed another program's database")
	}
}

// createForeign makes an SQLite database of another program, in the
// rollback journal mode most programs keep.
func createForeign(path string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE")
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(`CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos(name) VALUES ('cat.jpg')`); err != nil {
		return err
	}
	return db.Close()
}

// TestNoSalvageUnderAnotherKz: while another kz has the database open, a
// damaged database is not salvaged (that would take the file from under
// it): Open reads it as it is and says to salvage later, and Salvage
// refuses.
func TestNoSalvageUnderAnotherKz(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kz.db")
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	if err := os.WriteFile(path+damagedSuffix, []byte("database disk image is malformed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Recovered, "another kz is using it, so it was not salvaged") {
		t.Errorf("Recovered = %q", st.Recovered)
	}
	_ = st.Close()
	if _, err := Salvage(ctx, path, "test"); !errors.Is(err, ErrDatabaseInUse) {
		t.Errorf("salvage beside another kz: %v", err)
	}
	if kept, _ := filepath.Glob(path + ".corrupt-*"); len(kept) != 0 {
		t.Errorf("the database was set aside: %v", kept)
	}
}
