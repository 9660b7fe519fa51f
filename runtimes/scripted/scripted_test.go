package scripted

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/trickle"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"type":"text_delta","text":"a"}` + "\n" + `{"type":"text_delta","txt":"b"}`, `s.jsonl:2: malformed line: unknown field "txt"`},
		{"\n// comment\n{\"type\":\"nonsense\"}", `s.jsonl:3: unknown event type "nonsense"`},
		{`{"text":"no type"}`, `s.jsonl:1: line has neither an event "type" nor a directive`},
		{`{"type":"text_delta","cycle":true}`, "s.jsonl:1: a line is one event or one directive"},
		{`{"type":"text_delta","when":"maybe"}`, `s.jsonl:1: "when" must be "allow" or "deny"`},
		{`{"fail":{}}`, `s.jsonl:1: "fail" needs a "kind"`},
		{`{"kz_script":2}`, "s.jsonl:1: bad header: kz_script version 2"},
		{`{"kz_script":1,"capabilities":["telepathy"]}`, `s.jsonl:1: bad header: malformed line: unknown capability "telepathy"`},
		{`{"type":"text_delta"} {"type":"text_delta"}`, "s.jsonl:1: malformed line: trailing data"},
		{`{"type":"text_delta","delay_ms":-1}`, "s.jsonl:1: delay_ms, repeat and sleep_ms cannot be negative"},
		{"{\"type\":", "s.jsonl:1: malformed line: not valid JSON: the object is cut short"},
		{`{"type":"final_result","status":"bogus"}`, `s.jsonl:1: unknown final_result status "bogus" (use complete, interrupted, error, max_cycles, budget_exceeded, timeout)`},
		{`{"fail":{"kind":"weird"}}`, `s.jsonl:1: unknown "fail" kind "weird" (use runtime_missing, crashed, auth, rate_limit, overloaded,`},
		{"\n[1, 2]", "s.jsonl:2: malformed line: each line must be a JSON object, not an array"},
		{`"text"`, "s.jsonl:1: malformed line: each line must be a JSON object, not a string"},
		{`{"type":5}`, "s.jsonl:1: malformed line: type: want a string, got number"},
		{`{"type":"text_delta","delay_ms":"soon"}`, "s.jsonl:1: malformed line: delay_ms: want an integer, got string"},
		{`{"fail":{"kind":3}}`, "s.jsonl:1: malformed line: fail.kind: want a string, got number"},
		{`{"type":"command_finished","exit_code":1.5}`, "s.jsonl:1: malformed line: exit_code: want an integer, got number 1.5"},
		{`{"type" "x"}`, "s.jsonl:1: malformed line: not valid JSON at byte 9: invalid character"},
		{"", "s.jsonl: empty script"},
		{"\n// only a comment\n\n", "s.jsonl: empty script"},
		{`{"kz_script":1,"capabilities":["text_completion"]}`, "s.jsonl: empty script"},
	}
	for _, c := range cases {
		_, err := Parse("s", "s.jsonl", strings.NewReader(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.body, err, c.want)
			continue
		}
		// Script errors are read by people writing JSON: they name no
		// Go type or package.
		for _, leak := range []string{"Go value", "scripted.", "engine.", "json:"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%q: err %q leaks %q", c.body, err, leak)
			}
		}
	}
}

func TestHeaderDeclaresCapabilitiesAndSegments(t *testing.T) {
	rt, err := Parse("s", "s.jsonl", strings.NewReader(`{"kz_script":1,"model":"tiny","capabilities":["text_completion"],"context_window":4096}
{"type":"assistant_message","text":"one"}
{"end_turn":true}
{"type":"assistant_message","text":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	caps := rt.Capabilities("")
	if caps.Set != engine.NewCapSet(engine.CapTextCompletion) || caps.ContextWindow != 4096 || rt.Model() != "tiny" {
		t.Fatalf("caps %+v model %s", caps, rt.Model())
	}
	if len(rt.segments) != 2 {
		t.Fatalf("%d segments", len(rt.segments))
	}
	plain, err := Parse("p", "p.jsonl", strings.NewReader(`{"type":"assistant_message","text":"x"}`))
	if err != nil || plain.Capabilities("").Set != FullAgent {
		t.Fatalf("headerless script: %v %v", err, plain.Capabilities(""))
	}
}

type journal struct{ evs []engine.Event }

func (j *journal) Append(ev engine.Event) error { j.evs = append(j.evs, ev); return nil }
func (j *journal) Flush(context.Context) error  { return nil }

// TestReplay plays a script through a real session: segments per turn,
// delay_ms honoured, a final_result line ending the turn with its status,
// a fail directive classified for the failover chain, and the branch taken
// on the permission answer.
func TestReplay(t *testing.T) {
	rt, err := Parse("s", "s.jsonl", strings.NewReader(`{"kz_script":1,"model":"m","capabilities":["text_completion","native_tool_loop","filesystem_edit","shell"]}
{"type":"text_delta","text":"slow","delay_ms":150}
{"type":"final_result","status":"interrupted","output":"stopped early"}
{"type":"text_delta","text":"never"}
{"end_turn":true}
{"type":"permission_requested","tool":"write_file","paths":["a.txt"],"tool_call_id":"w1"}
{"type":"assistant_message","text":"wrote it","when":"allow"}
{"type":"assistant_message","text":"was refused","when":"deny"}
{"end_turn":true}
{"fail":{"kind":"rate_limit","message":"429 slow down","retry_after_ms":2000}}
`))
	if err != nil {
		t.Fatal(err)
	}
	j := &journal{}
	s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}},
		PermissionMode: engine.PermissionAcceptEdits})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	ctx := context.Background()

	start := time.Now()
	final, err := s.RunTurn(ctx, "one")
	if err != nil || final.Status != "interrupted" || final.Output != "stopped early" {
		t.Fatalf("turn 1: %v %+v", err, final)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("delay_ms not honoured: turn took %v", d)
	}
	final, err = s.RunTurn(ctx, "two")
	if err != nil || final.Status != "complete" || final.Output != "wrote it" {
		t.Fatalf("turn 2 (accept-edits allows the write): %v %+v", err, final)
	}
	if err := s.SetPermissionMode(engine.PermissionDeny); err != nil {
		t.Fatal(err)
	}
	final, err = s.RunTurn(ctx, "three")
	if err != nil || final.Status != "error" {
		t.Fatalf("turn 3: %v %+v", err, final)
	}
	var kinds []engine.ErrorKind
	var text strings.Builder
	for _, ev := range j.evs {
		switch ev.Type {
		case engine.EventError:
			kinds = append(kinds, ev.ErrorKind)
		case engine.EventTextDelta:
			text.WriteString(ev.Text)
		}
	}
	if len(kinds) != 1 || kinds[0] != engine.ErrRateLimit || text.String() != "slow" {
		t.Fatalf("errors %v, text %q", kinds, text.String())
	}
	// The fourth turn wraps around to the first segment; with the write
	// denied, the second segment takes the other branch.
	if final, _ := s.RunTurn(ctx, "four"); final.Output != "stopped early" {
		t.Fatalf("turn 4: %+v", final)
	}
	if final, _ := s.RunTurn(ctx, "five"); final.Output != "was refused" {
		t.Fatalf("turn 5: %+v", final)
	}
}

// turnTexts runs n turns of rt in a real session and returns, per turn,
// its event types with the text of each text event, in order.
func turnTexts(t *testing.T, rt *Runtime, n int) [][]string {
	t.Helper()
	j := &journal{}
	s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	var out [][]string
	for i := range n {
		before := len(j.evs)
		if _, err := s.RunTurn(context.Background(), fmt.Sprint("turn ", i)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		var got []string
		for _, ev := range j.evs[before:] {
			switch ev.Type {
			case engine.EventTextDelta, engine.EventAssistantMessage, engine.EventSessionStarted:
				got = append(got, string(ev.Type)+":"+ev.Text)
			}
		}
		out = append(out, got)
	}
	return out
}

// TestLoadPlaysSegmentsFromTheFile loads a script with a header, comments,
// blank lines, CRLF endings, an empty turn and a trailing end_turn, and
// plays it from the file as Parse plays the same bytes from memory: each
// turn reads its segment from the offset Load noted.
func TestLoadPlaysSegmentsFromTheFile(t *testing.T) {
	body := strings.Join([]string{
		`{"kz_script":1,"model":"m","capabilities":["text_completion","native_tool_loop","filesystem_edit","shell"]}`,
		`// the first turn`,
		``,
		`{"type":"text_delta","text":"a"}` + "\r",
		`  {"type":"text_delta","text":"b"}  `,
		`{"type":"assistant_message","text":"ab"}`,
		`{"end_turn":true}`,
		`{"end_turn":true}`,
		`{"type":"session_started","text":""}`,
		`{"type":"assistant_message","text":"third","repeat":2}`,
		`{"end_turn":true}`,
		``,
	}, "\n")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := Load("s", path)
	if err != nil {
		t.Fatal(err)
	}
	fromMem, err := Parse("s", "s.jsonl", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(fromFile.segments) != 3 {
		t.Fatalf("%d segments, want 3: %+v", len(fromFile.segments), fromFile.segments)
	}
	want := [][]string{
		{"session_started:", "text_delta:a", "text_delta:b", "assistant_message:ab"},
		{"session_started:"},
		{"session_started:", "assistant_message:third", "assistant_message:third"},
		{"session_started:", "text_delta:a", "text_delta:b", "assistant_message:ab"},
	}
	for name, rt := range map[string]*Runtime{"Load": fromFile, "Parse": fromMem} {
		if got := turnTexts(t, rt, 4); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: turns\n%v\nwant\n%v", name, got, want)
		}
	}
}

// TestLoadRefusesAScriptChangedSince: a turn plays only the file Load
// checked; an edited script fails the turn with a message that says so,
// instead of playing unchecked lines from stale offsets.
func TestLoadRefusesAScriptChangedSince(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"assistant_message","text":"one"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := Load("s", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"type":"nonsense"}`+"\n"+`{"type":"assistant_message","text":"two"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSession(engine.Config{Journal: &journal{}, Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	final, _ := s.RunTurn(context.Background(), "go")
	if final.Status != string(engine.StatusError) || !strings.Contains(final.Output+fmt.Sprint(final), "changed since kz loaded it") {
		t.Fatalf("final %+v, want an error saying the script changed", final)
	}
}

// TestLoadRefusesWhatIsNotAFile: a directory or a FIFO is no script (a
// FIFO would hang the read).
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	if _, err := Load("s", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := Load("s", filepath.Join(t.TempDir(), "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestLongLineNamesItsLine: a line over MaxLineBytes is named by number.
func TestLongLineNamesItsLine(t *testing.T) {
	body := `{"type":"text_delta","text":"a"}` + "\n" + `{"type":"text_delta","text":"` + strings.Repeat("x", MaxLineBytes) + `"}` + "\n"
	_, err := Parse("s", "s.jsonl", strings.NewReader(body))
	if err == nil || !strings.Contains(err.Error(), "s.jsonl:2: line longer than") {
		t.Fatalf("err = %v", err)
	}
}

// A line's delay counts from when the previous line was due: a turn
// behind its timeline plays what is due without sleeping and keeps the
// timeline; one further behind than maxLag restarts it from now; a zero
// due (after a permission answer or a subagent) starts a new one.
func TestDelaysFollowTheScriptsTimeline(t *testing.T) {
	turn := &engine.Turn{Graceful: make(chan struct{})}
	behind := time.Now().Add(-maxLag / 2)
	p := player{t: turn, due: behind}
	if stop, err := p.wait(context.Background(), 1); stop || err != nil {
		t.Fatal(stop, err)
	}
	if want := behind.Add(time.Millisecond); !p.due.Equal(want) {
		t.Errorf("behind the timeline: due %v, want %v (kept, one delay on)", p.due, want)
	}
	stalled := time.Now().Add(-time.Hour)
	p.due = stalled
	before := time.Now()
	if stop, err := p.wait(context.Background(), 1); stop || err != nil {
		t.Fatal(stop, err)
	}
	if p.due.Before(before.Add(time.Millisecond)) {
		t.Errorf("after a stall the timeline should restart from now: due %v, before %v", p.due, before)
	}
	p.due = time.Time{}
	before = time.Now()
	if stop, err := p.wait(context.Background(), 0); stop || err != nil {
		t.Fatal(stop, err)
	}
	if p.due.Before(before) {
		t.Errorf("a zero due should start the timeline now: due %v", p.due)
	}
}

// Lines that come densely (a delta every millisecond) are played as a
// reader of a real stream reads them (trickle.Gate): in batches about a
// frame apart, none later than a frame after it was due, all of them in
// order; lines further apart are played when due.
func TestDenseLinesArePlayedInBatches(t *testing.T) {
	turn := &engine.Turn{Graceful: make(chan struct{})}
	p := player{t: turn}
	start := time.Now()
	var played []time.Time
	for range 200 {
		if stop, err := p.wait(context.Background(), 1); stop || err != nil {
			t.Fatal(stop, err)
		}
		played = append(played, time.Now())
	}
	batches := 1
	for i := 1; i < len(played); i++ {
		if played[i].Sub(played[i-1]) > time.Millisecond/2 {
			batches++
		}
	}
	// 200 ms of lines a frame apart: about 25 batches, against 200 one
	// by one; a slow machine only makes the batches bigger.
	if batches > 200/int(trickle.Window/time.Millisecond)+trickle.Burst+8 {
		t.Errorf("200 lines a millisecond apart played in %d batches", batches)
	}
	for i, at := range played {
		due := start.Add(time.Duration(i+1) * time.Millisecond)
		if late := at.Sub(due); late > trickle.Window+20*time.Millisecond {
			t.Errorf("line %d played %v after it was due", i, late)
		}
	}
	// Sparse lines are played one by one, each when due on the script's
	// timeline, never earlier (a line played late shortens the wait for
	// the next, which keeps its own time: measuring each wait alone made
	// this test fail on a loaded machine).
	p = player{t: turn}
	start = time.Now()
	for i := range 5 {
		if stop, err := p.wait(context.Background(), 15); stop || err != nil {
			t.Fatal(stop, err)
		}
		due := time.Duration(i+1) * 15 * time.Millisecond
		if at := time.Since(start); at < due-time.Millisecond {
			t.Errorf("sparse line %d played %v after the start, before it was due at %v", i, at, due)
		}
	}
}

// TestReplayedLinesCarryOnlyTheirOwnFields plays lines that set many
// fields followed by lines that set few, through the one line value each
// pass reuses: a field, a slice or an option of one line never reaches the
// next, and each played event is the line as a strict decode reads it.
func TestReplayedLinesCarryOnlyTheirOwnFields(t *testing.T) {
	script := `{"type":"tool_call_started","tool_call_id":"c1","tool":"grep","input":{"pattern":"x"},"paths":["a.go","b.go"],"text":"t1","repeat":2}
{"type":"text_delta","text":"plain"}
{"type":"tool_call_finished","tool_call_id":"c1","tool":"grep","status":"ok","output":"a.go:1","is_error":true}
{"type":"text_delta","text":"again"}
{"type":"notice","stage":"hook","feedback":"told","reason":"r","paths":["c.go"]}
{"type":"reasoning_delta","text":"why"}
{"type":"assistant_message","text":"end"}
`
	rt, err := Parse("s", "s.jsonl", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	j := &journal{}
	s, err := engine.NewSession(engine.Config{Journal: j, Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	if _, err := s.RunTurn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	var want []engine.Event
	for raw := range strings.Lines(script) {
		var l line
		if err := decodeStrict([]byte(raw), &l); err != nil {
			t.Fatal(err)
		}
		for range max(l.Repeat, 1) {
			want = append(want, l.Event)
		}
	}
	// The session adds its own events (the user's message, the turn's
	// start and end); the played ones are those the script names, in
	// order, with kz's fields (seq, time, ids) left out.
	var got []engine.Event
	for _, ev := range j.evs {
		if ev.Type == engine.EventUserMessage || ev.Type == engine.EventSessionStarted || ev.Type == engine.EventFinalResult ||
			ev.Type == engine.EventUsageUpdated {
			continue
		}
		ev.SessionID, ev.Seq, ev.Time, ev.TurnID, ev.Runtime, ev.Model = "", 0, time.Time{}, 0, "", ""
		got = append(got, ev)
	}
	if len(got) != len(want) {
		t.Fatalf("played %d events, the script has %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}
