package cli

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// smallDisk mounts a tmpfs of the given size on a new folder and returns
// it; the test is skipped, saying why, when mounting is impossible (not
// root, no mount permission), unless KZ_REQUIRE_FULLDISK is set.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("KZ_REQUIRE_FULLDISK") != "" {
			t.Fatalf("mount a %s tmpfs on %s: %v (KZ_REQUIRE_FULLDISK is set)", size, dir, err)
		}
		t.Skipf("cannot mount a %s tmpfs to fill (%v): the full-disk test needs root; set KZ_REQUIRE_FULLDISK to make this a failure", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the file system is full, then frees
// keep bytes of it, and returns the file's path.
func fill(t *testing.T, dir, name string, keep int64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 64<<10)
	var n int64
	for {
		m, err := f.Write(block)
		n += int64(m)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(max(0, n-keep)); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	return path
}

// TestFullDiskEndsTheTurnAndKeepsReadsWorking runs kz on a small real file
// system that fills up in the middle of a turn: the turn ends at once
// with a clear error and exit 1, every event printed before is stored with
// its sequence number, and with the disk still full kz sessions list, show
// and export, kz runtimes and kz doctor keep working. Once space is freed,
// kz closes the failed turn as interrupted and runs turns again.
func TestFullDiskEndsTheTurnAndKeepsReadsWorking(t *testing.T) {
	sb := newSandbox(t)
	disk := smallDisk(t, "8m")
	data := filepath.Join(disk, "data")
	hello := script("hello.jsonl")
	out, errOut, code := sb.kz("-p", "hi", "--script", hello, "--data-dir", data, "--output-format", "json")
	if code != 0 {
		t.Fatalf("first turn: exit %d %s", code, errOut)
	}
	var first engine.Event
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatal(err)
	}

	// A turn of large tool outputs (about 3.6 MB in all), on a disk with
	// one and a half megabytes left: the store fills it in the middle of
	// the turn. The space left is generous because what a new process
	// writes before the turn (its log, the session's first events) differs
	// between machines.
	var sc strings.Builder
	sc.WriteString(`{"type":"session_started"}` + "\n")
	for i := range 60 {
		fmt.Fprintf(&sc, `{"type":"text_delta","text":"reading part %d\n"}`+"\n", i)
		fmt.Fprintf(&sc, `{"type":"tool_call_started","tool_call_id":"c%d","tool":"read_file","input":{"path":"big.txt"}}`+"\n", i)
		fmt.Fprintf(&sc, `{"type":"tool_call_finished","tool_call_id":"c%d","tool":"read_file","output":%q,"delay_ms":10}`+"\n", i, strings.Repeat(fmt.Sprintf("row %d of a large file\n", i), 3000))
	}
	sc.WriteString(`{"type":"assistant_message","text":"read it all"}` + "\n")
	big := filepath.Join(sb.workspace, "big.jsonl")
	writeFile(t, big, sc.String())
	filler := fill(t, disk, "filler", 1536<<10)
	// Each command runs as a process of its own, as a person's would: the
	// next one closes the turn of a dead process, never of a live one.
	out, errOut, code = sb.kzProcess(nil, "-p", "read the file", "--script", big, "--data-dir", data, "--output-format", "stream-json")
	if code != 1 || !strings.Contains(errOut, "not saved") || !strings.Contains(errOut, "full") {
		t.Fatalf("turn on a full disk: exit %d\nstderr: %s", code, errOut)
	}
	evs := streamEvents(t, out)
	last := evs[len(evs)-1]
	if last.Type != engine.EventFinalResult || last.Seq != 0 || last.Status != "error" || last.ErrorKind != engine.ErrStorage || !strings.Contains(last.Text, "full") {
		t.Fatalf("the stream does not end with an unsaved error result: %+v", last)
	}
	id := evs[0].SessionID
	printed := map[int64]engine.Event{}
	for _, ev := range evs[:len(evs)-1] {
		printed[ev.Seq] = ev
	}
	t.Logf("%d events printed before the disk filled", len(printed))
	if len(printed) < 3 {
		t.Fatalf("only %d events were stored before the disk filled: the test does not fill it in the middle of the turn", len(printed))
	}

	// What the failed kz freed as it ended (its log, checkpointed) is
	// taken too: the disk stays full, and every read command works.
	filler2 := fill(t, disk, "filler2", 0)
	for _, args := range [][]string{{"sessions", "list"}, {"sessions", "show", id}, {"sessions", "export", id, "--format", "json"}, {"runtimes"}, {"doctor"}} {
		if args[0] != "runtimes" {
			args = append(args, "--data-dir", data)
		}
		out, errOut, code := sb.kzProcess(nil, args...)
		if code != 0 {
			t.Fatalf("kz %s on a full disk: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		if args[0] == "sessions" && args[1] == "list" {
			if !strings.Contains(out, first.SessionID[:8]) || !strings.Contains(out, id[:8]) {
				t.Fatalf("kz sessions list on a full disk lacks a session:\n%s", out)
			}
			// The turn of the dead process is closed when the space its
			// log already holds is enough, else left open with a word.
			// Or, when the database cannot even be opened for writing,
			// it is read as it is, with a word.
			if errOut != "" && !strings.Contains(errOut, "is full, so turns that a killed kz left open could not be closed yet") &&
				!strings.Contains(errOut, "is full: the sessions are shown as they are") {
				t.Errorf("kz sessions list on a full disk: stderr %q", errOut)
			}
			t.Logf("kz sessions list on the full disk: stderr %q", errOut)
		}
	}
	// A turn on the full disk fits in the space the log already holds,
	// or ends at once, saying why.
	if _, errOut, code := sb.kzProcess(nil, "-p", "hi", "--script", hello, "--data-dir", data); code != 0 && (code != 1 || !strings.Contains(errOut, "full")) {
		t.Fatalf("a turn on a full disk: exit %d\n%s", code, errOut)
	}
	// Every printed event is stored, with its sequence number. The check
	// opens the database itself, which may need to create its shared
	// memory file: it runs once space is free again (the kz commands
	// above showed reads work on the full disk), before any kz writes.
	for _, f := range []string{filler, filler2} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "kz.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for seq, ev := range printed {
		var typ string
		if err := db.QueryRow(`SELECT type FROM events WHERE session_id = ? AND seq = ?`, id, seq).Scan(&typ); err != nil || typ != string(ev.Type) {
			t.Fatalf("printed %s#%d is not stored (%q %v)", ev.Type, seq, typ, err)
		}
	}
	var firstEvents int
	if err := db.QueryRow(`SELECT COUNT(*) FROM events WHERE session_id = ?`, first.SessionID).Scan(&firstEvents); err != nil || firstEvents == 0 {
		t.Fatalf("the earlier session lost its events: %d %v", firstEvents, err)
	}

	// Space again: the failed turn is closed as interrupted, and a turn
	// runs.
	if _, errOut, code := sb.kzProcess(nil, "-p", "hi", "--script", hello, "--data-dir", data); code != 0 {
		t.Fatalf("turn after freeing space: exit %d %s", code, errOut)
	}
	show, errOut, code := sb.kzProcess(nil, "sessions", "show", id, "--data-dir", data)
	if code != 0 || !strings.Contains(show, "interrupted") {
		t.Fatalf("the failed turn after freeing space: exit %d\n%s%s", code, show, errOut)
	}
	var verdict string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&verdict); err != nil || verdict != "ok" {
		t.Fatalf("integrity %q %v", verdict, err)
	}
}
