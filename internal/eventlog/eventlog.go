// Package eventlog keeps recorded engine event sequences as JSON lines in
// testdata/events: each CLI runtime's tests replay the real protocol
// samples they hold (runtimes/*/testdata) and record the events kz made of
// them, and the TUI's card tests read those sequences. The TUI is so
// tested on the events the runtimes really send, in the order they send
// them, without importing any runtime.
//
// A recorded sequence holds nothing that changes from run to run: times,
// sequence numbers, the session id and the turn's duration are dropped,
// request ids are numbered in order, and the temporary workspace is
// written as Workspace.
package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// Workspace stands for the workspace of the run that was recorded.
const Workspace = "/ws"

// Path is the file of a recorded sequence, from a package directory: root
// is the way up to the module root ("../.." from runtimes/codex).
func Path(root, name string) string {
	return filepath.Join(root, "testdata", "events", name+".jsonl")
}

// Normalize makes a recorded sequence independent of the run: ws (the
// run's workspace, as the runtime saw it) becomes Workspace, and what
// depends on the clock or on random ids is dropped or numbered.
func Normalize(evs []engine.Event, ws string) ([]engine.Event, error) {
	reqs := map[string]string{}
	out := make([]engine.Event, 0, len(evs))
	for _, ev := range evs {
		ev.Time, ev.Seq, ev.SessionID = time.Time{}, 0, ""
		if ev.Type == engine.EventFinalResult {
			ev.DurationMS = 0
		}
		if ev.RequestID != "" {
			id, ok := reqs[ev.RequestID]
			if !ok {
				id = fmt.Sprintf("r%d", len(reqs)+1)
				reqs[ev.RequestID] = id
			}
			ev.RequestID = id
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("normalize %s: %w", ev.Type, err)
		}
		if ws != "" {
			b = bytes.ReplaceAll(b, []byte(ws), []byte(Workspace))
		}
		var n engine.Event
		if err := json.Unmarshal(b, &n); err != nil {
			return nil, fmt.Errorf("normalize %s: %w", ev.Type, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// Encode writes a sequence as JSON lines.
func Encode(evs []engine.Event) ([]byte, error) {
	var b bytes.Buffer
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", ev.Type, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// Load reads a recorded sequence.
func Load(path string) ([]engine.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load events: %w", err)
	}
	defer func() { _ = f.Close() }()
	var out []engine.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ev engine.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return nil, fmt.Errorf("load events %s:%d: %w", path, n, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load events %s: %w", path, err)
	}
	return out, nil
}

// Check compares a run's events, normalized, with the recorded sequence
// at path, or rewrites the file when update is set. It returns a
// description of the difference, or "" when they are equal.
func Check(path string, evs []engine.Event, ws string, update bool) (string, error) {
	norm, err := Normalize(evs, ws)
	if err != nil {
		return "", err
	}
	got, err := Encode(norm)
	if err != nil {
		return "", err
	}
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("record events: %w", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			return "", fmt.Errorf("record events: %w", err)
		}
		return "", nil
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w (rerun the test with -update-events)", err)
	}
	if bytes.Equal(got, want) {
		return "", nil
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("%s differs at line %d (rerun with -update-events if the change is meant):\n got %s\nwant %s", path, i+1, g, w), nil
		}
	}
	return "", nil
}
