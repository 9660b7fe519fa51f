package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type journal struct {
	mu sync.Mutex
	n  int
}

func (j *journal) Append(engine.Event) error   { j.mu.Lock(); j.n++; j.mu.Unlock(); return nil }
func (j *journal) Flush(context.Context) error { return nil }

const turn = `{"kz_script":1,"model":"m","capabilities":["text_completion","native_tool_loop","filesystem_edit","shell"]}
{"type":"session_started"}
{"type":"text_delta","text":"Hel"}
{"type":"text_delta","text":"lo"}
{"type":"assistant_message","text":"Hello"}
{"type":"permission_requested","tool":"bash","command":"rm -rf build","tool_call_id":"t1"}
{"type":"error","text":"disk almost full","error_kind":"internal"}
{"type":"notice","text":"the Stop hook ran the formatter","stage":"hook"}
{"type":"assistant_message","text":"Bye"}
`

func session(t *testing.T, body string, mode engine.Mode) *engine.Session {
	t.Helper()
	rt, err := scripted.Parse("scripted", "s.jsonl", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSession(engine.Config{Journal: &journal{}, Mode: mode,
		Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func TestFormats(t *testing.T) {
	t.Parallel()
	t.Run("text", func(t *testing.T) {
		var out, errOut bytes.Buffer
		final, err := Run(context.Background(), session(t, turn, ""), "hi", FormatText, &out, &errOut)
		if err != nil || final.Status != "complete" {
			t.Fatalf("%v %+v", err, final)
		}
		// Streamed text is printed once, a whole message without deltas
		// is printed as it is, and problems go to the error stream.
		if out.String() != "HelloBye\n" {
			t.Fatalf("stdout %q", out.String())
		}
		for _, want := range []string{"kz: denied bash rm -rf build (headless:", "kz: error: disk almost full", "kz: hook: the Stop hook ran the formatter"} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("stderr %q lacks %q", errOut.String(), want)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if _, err := Run(context.Background(), session(t, turn, ""), "hi", FormatJSON, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		var ev engine.Event
		if err := json.Unmarshal(out.Bytes(), &ev); err != nil || ev.Type != engine.EventFinalResult || ev.Output != "Bye" {
			t.Fatalf("%v %q", err, out.String())
		}
		if !strings.Contains(errOut.String(), "disk almost full") {
			t.Fatalf("stderr %q", errOut.String())
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if _, err := Run(context.Background(), session(t, turn, ""), "hi", FormatStreamJSON, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		var types []string
		var text string
		prev := int64(0)
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var ev engine.Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if ev.Seq <= prev || ev.SessionID == "" || ev.Runtime == "" {
				t.Fatalf("badly stamped: %s", line)
			}
			prev = ev.Seq
			// Deltas arrive merged or not, depending on how fast the
			// printer reads; count a run of them once.
			if n := len(types); n == 0 || ev.Type != engine.EventTextDelta || types[n-1] != string(ev.Type) {
				types = append(types, string(ev.Type))
			}
			if ev.Type == engine.EventTextDelta {
				text += ev.Text
			}
		}
		got := strings.Join(types, ",")
		want := "session_started,text_delta,assistant_message,permission_decided,error,notice,assistant_message,final_result"
		if got != want || text != "Hello" {
			t.Fatalf("stream %s (text %q), want %s", got, text, want)
		}
		if errOut.Len() != 0 {
			t.Fatalf("stream-json wrote to stderr: %q", errOut.String())
		}
	})
}

func TestRunReportsATurnThatCannotStart(t *testing.T) {
	t.Parallel()
	textOnly := `{"kz_script":1,"capabilities":["text_completion"]}` + "\n" + `{"type":"assistant_message","text":"x"}` + "\n"
	var out, errOut bytes.Buffer
	_, err := Run(context.Background(), session(t, textOnly, engine.ModeFullAutonomous), "hi", FormatStreamJSON, &out, &errOut)
	var ce *engine.CapabilityError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v, stdout %q", err, out.String())
	}
	// stream-json prints the turn's final_result as its one line, with
	// the error's kind.
	var ev engine.Event
	if jerr := json.Unmarshal(out.Bytes(), &ev); jerr != nil || strings.Count(out.String(), "\n") != 1 ||
		ev.Type != engine.EventFinalResult || ev.ErrorKind != engine.ErrCapability {
		t.Fatalf("stdout %q (%v)", out.String(), jerr)
	}
}

// TestRunPrintsTheResultOfAnInterruptedTurn: Ctrl-C (or a hangup)
// cancels the context; the turn ends interrupted, and its final_result is
// still printed, which is all the json format prints.
func TestRunPrintsTheResultOfAnInterruptedTurn(t *testing.T) {
	t.Parallel()
	slow := `{"kz_script":1,"capabilities":["text_completion"]}` + "\n" +
		`{"type":"text_delta","text":"y","delay_ms":5,"repeat":10000}` + "\n"
	for _, format := range []Format{FormatJSON, FormatStreamJSON} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		var out, errOut bytes.Buffer
		final, err := Run(ctx, session(t, slow, engine.ModeAnalysisOnly), "hi", format, &out, &errOut)
		cancel()
		if err != nil || final.Status != string(engine.StatusInterrupted) {
			t.Fatalf("%s: %v %+v", format, err, final)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var ev engine.Event
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Type != engine.EventFinalResult || ev.Status != string(engine.StatusInterrupted) {
			t.Fatalf("%s: last line %q (%v), want the interrupted final_result", format, lines[len(lines)-1], err)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestRunReportsAnOutputThatCannotBeWritten(t *testing.T) {
	t.Parallel()
	final, err := Run(context.Background(), session(t, turn, ""), "hi", FormatStreamJSON, failWriter{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "broken pipe") || final.Status != "complete" {
		t.Fatalf("%v %+v", err, final)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	want := map[engine.Status]int{
		engine.StatusComplete: 0, engine.StatusError: 1, engine.StatusInterrupted: 3,
		engine.StatusMaxCycles: 3, engine.StatusBudgetExceeded: 3, engine.StatusTimeout: 3, "": 1,
	}
	for st, code := range want {
		if got := ExitCode(st); got != code {
			t.Errorf("ExitCode(%q) = %d, want %d", st, got, code)
		}
	}
	for _, f := range []string{"text", "json", "stream-json"} {
		if _, err := ParseFormat(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
}

// TestTextFormatShowsControlCharactersVisibly: escape sequences in a
// model's answer (an OSC 52 clipboard write, a title change, a carriage
// return, a C1 control) and in a problem line reach the terminal shown
// visibly, never raw, while newlines and tabs stay. json keeps the exact
// text.
func TestTextFormatShowsControlCharactersVisibly(t *testing.T) {
	t.Parallel()
	const body = `{"kz_script":1,"model":"m","capabilities":["text_completion","native_tool_loop","filesystem_edit","shell"]}
{"type":"text_delta","text":"copy\u001b]52;c;ZXZpbA==\u0007 \u001b]0;owned\u0007"}
{"type":"text_delta","text":"a\tb\nfake\rreal \u009b2J café"}
{"type":"assistant_message","text":"ignored"}
{"type":"assistant_message","text":"whole \u001b[2J message"}
{"type":"error","text":"bad \u001b]0;x\u0007 thing","error_kind":"internal"}
`
	var out, errOut bytes.Buffer
	if _, err := Run(context.Background(), session(t, body, ""), "hi", FormatText, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	want := `copy\x1b]52;c;ZXZpbA==\x07 \x1b]0;owned\x07` + "a\tb\nfake" + `\rreal \u009b2J ` + "café" + `whole \x1b[2J message` + "\n"
	if out.String() != want {
		t.Fatalf("stdout %q\nwant   %q", out.String(), want)
	}
	if !strings.Contains(errOut.String(), `kz: error: bad \x1b]0;x\x07 thing`) {
		t.Fatalf("stderr %q", errOut.String())
	}
	for _, b := range []byte(out.String() + errOut.String()) {
		if (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f {
			t.Fatalf("byte %#x printed raw", b)
		}
	}
	out.Reset()
	if _, err := Run(context.Background(), session(t, body, ""), "hi", FormatJSON, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var ev engine.Event
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil || ev.Output != "whole \x1b[2J message" {
		t.Fatalf("json %v %q", err, out.String())
	}
}

// TestPrinterKeepsACharacterCutBetweenDeltas: a UTF-8 character split
// over two text deltas is printed whole, not as two U+FFFD.
func TestPrinterKeepsACharacterCutBetweenDeltas(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := &printer{format: FormatText, out: &out, errOut: &out}
	for _, ev := range []engine.Event{
		{Type: engine.EventTextDelta, Text: "caf\xc3"},
		{Type: engine.EventTextDelta, Text: "\xa9 \xe2\x82"},
		{Type: engine.EventTextDelta, Text: "\xac"},
		{Type: engine.EventFinalResult, Status: "complete"},
	} {
		p.print(ev)
	}
	if out.String() != "café €\n" {
		t.Fatalf("%q", out.String())
	}
}
