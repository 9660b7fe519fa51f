package cli

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// killScript is a streamed turn of about two seconds: lines of text, text
// that ends without a newline, tool calls with progress, usage, with a
// pause before each event as a model and its tools would take.
func killScript() string {
	var b strings.Builder
	b.WriteString(`{"type":"session_started"}` + "\n")
	for i := range 80 {
		fmt.Fprintf(&b, `{"type":"text_delta","text":"Step %d: I will read the file.\n","delay_ms":4}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"text_delta","text":"Then ","delay_ms":2}`+"\n")
		fmt.Fprintf(&b, `{"type":"text_delta","text":"decide. ","delay_ms":2}`+"\n")
		fmt.Fprintf(&b, `{"type":"tool_call_started","tool_call_id":"c%d","tool":"bash","input":{"command":"cat f%d.go"},"delay_ms":3}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"tool_call_progress","tool_call_id":"c%d","output":"package f\n","delay_ms":3}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"tool_call_finished","tool_call_id":"c%d","tool":"bash","output":"package f\n\nfunc F%d() {}\n","delay_ms":5}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"usage_updated","usage":{"input_tokens":100,"output_tokens":10},"cost_usd":0.0001}`+"\n")
	}
	b.WriteString(`{"type":"assistant_message","text":"All read.","delay_ms":2}` + "\n")
	return b.String()
}

// killRun is the outcome of one kill.
type killRun struct {
	printed, stored, recovery int
	killedAfter               string
	err                       error
}

// TestKill9WhileStreaming kills `kz -p --output-format stream-json` with
// SIGKILL at random points of streamed turns with tool calls, 100 times
// (20 with -short), four at a time, each in its own data folder. After
// each kill a new kz reads the session back (kz sessions export, which
// first closes the dead process's turn), and the run checks:
//
//   - every event printed on stdout is in the export with the same
//     sequence number, type and content;
//   - no sequence number appears twice, on stdout or in the store, and
//     the events that close the turn come after every printed one;
//   - the turn is recorded interrupted;
//   - integrity_check passes.
//
// Half the kills come at a random time, half right after a random number
// of lines were read from stdout, the moment an event has just been
// printed.
func TestKill9WhileStreaming(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	scriptPath := filepath.Join(sb.workspace, "kill.jsonl")
	writeFile(t, scriptPath, killScript())
	kills := 100
	if testing.Short() {
		kills = 20
	}
	runs := make([]killRun, kills)
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				runs[i] = killOnce(sb, scriptPath, filepath.Join(sb.data, fmt.Sprint(i)), rand.New(rand.NewPCG(uint64(i), 18)))
			}
		}()
	}
	for i := range kills {
		work <- i
	}
	close(work)
	wg.Wait()
	var printed, stored, recovery, silent int
	for i, r := range runs {
		if r.err != nil {
			t.Errorf("kill %d (%s): %v", i, r.killedAfter, r.err)
		}
		printed += r.printed
		stored += r.stored
		recovery += r.recovery
		if r.printed == 0 {
			silent++
		}
	}
	t.Logf("%d kills: %d events printed and all found stored, %d events stored in all, %d closing events written by recovery, %d kills before anything was printed",
		kills, printed, stored, recovery, silent)
}

// killOnce runs one turn in dataDir, kills it, and checks what is left.
func killOnce(sb *sandbox, scriptPath, dataDir string, rng *rand.Rand) (r killRun) {
	cmd := exec.Command(os.Args[0], "-p", "read the files", "--script", scriptPath, "--output-format", "stream-json", "--data-dir", dataDir)
	cmd.Dir, cmd.Env = sb.workspace, sb.environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return killRun{err: err}
	}
	if err := cmd.Start(); err != nil {
		return killRun{err: err}
	}
	lines := make(chan string, 4096)
	var all []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		rd := bufio.NewReader(stdout)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				// A line cut by the kill has no newline: it was never
				// printed whole.
				close(lines)
				return
			}
			all = append(all, line)
			select {
			case lines <- line:
			default:
			}
		}
	}()
	if rng.IntN(2) == 0 {
		d := time.Duration(rng.IntN(1500)) * time.Millisecond
		r.killedAfter = "after " + d.String()
		time.Sleep(d)
	} else {
		n := 1 + rng.IntN(120)
		r.killedAfter = fmt.Sprintf("after line %d", n)
		for range n {
			if _, ok := <-lines; !ok {
				break
			}
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	<-done

	var evs []engine.Event
	seen := map[int64]bool{}
	for _, line := range all {
		var ev engine.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			r.err = fmt.Errorf("stdout line %q: %w", line, err)
			return r
		}
		if ev.Seq == 0 || seen[ev.Seq] {
			r.err = fmt.Errorf("printed sequence number %d twice or not at all: %s", ev.Seq, line)
			return r
		}
		seen[ev.Seq] = true
		evs = append(evs, ev)
	}
	r.printed = len(evs)
	if _, err := os.Stat(filepath.Join(dataDir, "kz.db")); errors.Is(err, os.ErrNotExist) {
		if len(evs) > 0 {
			r.err = errors.New("events were printed, but there is no database")
		}
		return r
	}
	// Read back as a person would: a new kz, which closes the dead
	// process's turn first.
	list, errOut, code := sb.kzProcess(nil, "sessions", "list", "--json", "--data-dir", dataDir)
	if code != 0 {
		r.err = fmt.Errorf("sessions list: exit %d %s", code, errOut)
		return r
	}
	var sessions []store.SessionInfo
	if err := json.Unmarshal([]byte(list), &sessions); err != nil {
		r.err = fmt.Errorf("sessions list: %w: %q", err, list)
		return r
	}
	switch {
	case len(sessions) > 1:
		r.err = fmt.Errorf("%d sessions from one turn", len(sessions))
		return r
	case len(sessions) == 0:
		if len(evs) > 0 {
			r.err = errors.New("events were printed, but no session is stored")
		}
		return r
	case len(evs) > 0 && sessions[0].ID != evs[0].SessionID:
		r.err = fmt.Errorf("printed session %s, stored %s", evs[0].SessionID, sessions[0].ID)
		return r
	}
	out, errOut, code := sb.kzProcess(nil, "sessions", "export", sessions[0].ID, "--format", "json", "--data-dir", dataDir)
	if code != 0 {
		r.err = fmt.Errorf("export: exit %d %s", code, errOut)
		return r
	}
	var x store.Export
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		r.err = fmt.Errorf("export: %w", err)
		return r
	}
	r.stored = len(x.Events)
	byseq := map[int64]engine.Event{}
	var maxPrinted int64
	for _, ev := range evs {
		maxPrinted = max(maxPrinted, ev.Seq)
	}
	for _, ev := range x.Events {
		if _, dup := byseq[ev.Seq]; dup {
			r.err = fmt.Errorf("sequence number %d stored twice", ev.Seq)
			return r
		}
		byseq[ev.Seq] = ev
		if ev.Seq > maxPrinted {
			r.recovery++
		}
	}
	for _, ev := range evs {
		got, ok := byseq[ev.Seq]
		if !ok || got.Type != ev.Type || got.Text != ev.Text || got.Output != ev.Output || got.ToolCallID != ev.ToolCallID || got.Status != ev.Status {
			r.err = fmt.Errorf("printed %s#%d %q is stored as %s %q (found %v)", ev.Type, ev.Seq, ev.Text, got.Type, got.Text, ok)
			return r
		}
	}
	// The turn ended as interrupted, by the recovery's closing events.
	if len(x.Turns) != 1 || x.Turns[0].Status != string(engine.StatusInterrupted) {
		r.err = fmt.Errorf("turns after recovery: %+v", x.Turns)
		return r
	}
	last := x.Events[len(x.Events)-1]
	if last.Type != engine.EventFinalResult || last.Status != string(engine.StatusInterrupted) || last.Seq <= maxPrinted {
		r.err = fmt.Errorf("the log ends with %s#%d %s, after printed #%d", last.Type, last.Seq, last.Status, maxPrinted)
		return r
	}
	r.err = integrity(filepath.Join(dataDir, "kz.db"))
	return r
}

// integrity runs PRAGMA integrity_check on a database.
func integrity(path string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	var verdict string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&verdict); err != nil {
		return err
	}
	if verdict != "ok" {
		return fmt.Errorf("integrity_check: %s", verdict)
	}
	return nil
}
