package store

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func TestProcessAliveComparesStartTime(t *testing.T) {
	self := selfStart()
	if self <= 0 {
		t.Fatalf("selfStart = %d: /proc/self/stat was not read", self)
	}
	child := osexec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	cs, err := processStart(child.Process.Pid)
	if err != nil || cs < self {
		t.Fatalf("start of a child = %d, %v; want at or after ours (%d)", cs, err, self)
	}
	me, dead := os.Getpid(), deadPID(t)
	for _, c := range []struct {
		name  string
		pid   int
		start int64
		want  bool
	}{
		{"this process", me, self, true},
		{"this process, start unknown", me, 0, true},
		{"an earlier process with this pid", me, self - 1, false},
		{"a live process", child.Process.Pid, cs, true},
		{"a live process, start unknown", child.Process.Pid, 0, true},
		{"a reused pid", child.Process.Pid, cs - 1, false},
		{"an exited process", dead, 0, false},
		{"no pid", 0, 0, false},
	} {
		if got := processAlive(c.pid, c.start); got != c.want {
			t.Errorf("%s: processAlive(%d, %d) = %v, want %v", c.name, c.pid, c.start, got, c.want)
		}
	}
	if _, err := processStart(dead); err == nil {
		t.Error("the start of an exited process was read")
	}
}

// TestOpenClosesTurnOfEarlierProcessWithSamePid: kz as pid 1 in a
// container has the same pid on every run. A turn left open by an earlier
// run must be closed although its pid is ours; our own open turn is not.
func TestOpenClosesTurnOfEarlierProcessWithSamePid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kz.db")
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"earlier", "ours"} {
		if err := st.CreateSession(ctx, id, "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
			t.Fatal(err)
		}
		if err := st.writeBatch(ctx, []engine.Event{ev(id, 1, engine.EventUserMessage, "go"), ev(id, 2, engine.EventTextDelta, "half")}); err != nil {
			t.Fatal(err)
		}
	}
	var pid int
	var start int64
	if err := st.db.QueryRow("SELECT pid, pid_start FROM turns WHERE session_id = 'ours'").Scan(&pid, &start); err != nil {
		t.Fatal(err)
	}
	if pid != os.Getpid() || start != selfStart() {
		t.Fatalf("turn recorded pid %d start %d, want %d %d", pid, start, os.Getpid(), selfStart())
	}
	if _, err := st.db.Exec("UPDATE turns SET pid_start = pid_start - 1 WHERE session_id = 'earlier'"); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if turns, _ := st.Turns(ctx, "earlier"); len(turns) != 1 || turns[0].Status != "interrupted" {
		t.Fatalf("the earlier process's turn = %+v, want interrupted", turns)
	}
	if turns, _ := st.Turns(ctx, "ours"); len(turns) != 1 || turns[0].Status != "" {
		t.Fatalf("our own running turn = %+v, want still open", turns)
	}
}
