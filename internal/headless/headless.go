// Package headless runs one turn without a terminal UI and prints it:
// the `kz -p` mode. It never waits for a person: the session it drives is
// non-interactive, so the gate's questions are answered by the flags.
package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/termsafe"
)

// Format is the output format of a headless run.
type Format string

// Output formats.
const (
	// FormatText prints the assistant's text as it streams.
	FormatText Format = "text"
	// FormatJSON prints the final_result event as one JSON object.
	FormatJSON Format = "json"
	// FormatStreamJSON prints every event as one JSON object per line.
	FormatStreamJSON Format = "stream-json"
)

// ParseFormat validates an output format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatText, FormatJSON, FormatStreamJSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q (use text, json or stream-json)", s)
}

// Exit codes of kz -p, documented in kz --help.
const (
	ExitComplete = 0
	ExitError    = 1
	ExitUsage    = 2
	ExitStopped  = 3
)

// ExitCode maps a final status to the process exit code: 0 complete, 1
// error, 3 interrupted or a limit hit.
//
// The code depends on the status alone, so that it always agrees with
// final_result.status. A patch-proposal turn whose last proposal was
// rejected or failed its verification still ends "complete" (the engine's
// proposal loop treats it as an answer the person reviews, not a failure of
// the turn, exactly like a declined proposal or an answer that holds none)
// and so exits 0; the rejection is in the event stream (patch_rejected,
// command_finished) and, in the text and json formats, on stderr.
func ExitCode(st engine.Status) int {
	switch st {
	case engine.StatusComplete:
		return ExitComplete
	case engine.StatusInterrupted, engine.StatusMaxCycles, engine.StatusBudgetExceeded, engine.StatusTimeout:
		return ExitStopped
	default:
		return ExitError
	}
}

// Run submits prompt, prints the turn to out in the given format and errors
// to errOut, and returns the final_result event. An error means the turn
// could not start (the message says why) or its output could not be written.
//
// It prints only what the session's journal has stored, as it was stored
// (see engine.Session.SubscribeStored): every event a stream-json reader
// sees is in the history with the same sequence number, even if kz is
// killed the next instant. Streamed text therefore appears as the store
// commits it, a line or more at a time. A turn whose events could not be
// stored (a full disk) ends with a final_result without a sequence number,
// which is in no history.
func Run(ctx context.Context, s *engine.Session, prompt string, format Format, out, errOut io.Writer) (engine.Event, error) {
	return RunMessage(ctx, s, engine.UserMessage{Text: prompt}, format, out, errOut)
}

// RunMessage is Run for a message with attached images (kz -p --image).
// A runtime without vision refuses it before the turn starts: the result
// is then a not-started final_result of error_kind capability.
func RunMessage(ctx context.Context, s *engine.Session, msg engine.UserMessage, format Format, out, errOut io.Writer) (engine.Event, error) {
	sub := s.SubscribeStored()
	defer sub.Close()
	// The printer does not stop with ctx: an interrupt cancels ctx, and
	// the turn then still ends with a final_result (status interrupted)
	// that must be printed. It stops at that event, or when the turn
	// could not start.
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	p := &printer{format: format, out: out, errOut: errOut}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.loop(pctx, sub)
	}()
	final, err := s.RunMessage(ctx, msg)
	if err != nil && final.Type == "" {
		stop()
		wg.Wait()
		st := s.State()
		ev := NotStarted(st.ID, st.Runtime, st.Model, err)
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Cancelled (an interrupt, a closed output) before the turn
			// began: interrupted, like a turn cut short, not an error.
			ev.Status, ev.ErrorKind = string(engine.StatusInterrupted), ""
		}
		if werr := WriteNotStarted(out, format, ev); werr != nil {
			return final, errors.Join(err, werr)
		}
		return final, err
	}
	// The printer stops by itself at final_result, which RunTurn has
	// published; it must print everything before it.
	wg.Wait()
	if p.err != nil {
		return final, p.err
	}
	return final, err
}

// NotStarted is the final_result of a turn that could not start (no
// capable runtime, a busy session): status error, with the reason in text
// and error_kind. It is never stored, because no session ran the turn;
// sessionID, runtime and model may be empty when none was chosen yet.
func NotStarted(sessionID, runtime, model string, err error) engine.Event {
	return engine.Event{Type: engine.EventFinalResult, SessionID: sessionID, Time: time.Now(), Runtime: runtime,
		Model: model, Status: string(engine.StatusError), Text: err.Error(), ErrorKind: engine.KindOf(err),
		Usage: &engine.Usage{}}
}

// WriteNotStarted prints ev, a NotStarted result, in the json and
// stream-json formats: both promise a final_result on stdout whatever
// happens, so that a program reading them learns the error's kind
// (runtime_missing, say) without parsing stderr. The text format prints
// nothing: the caller reports the error on stderr, as for every format,
// and exits 1.
func WriteNotStarted(out io.Writer, format Format, ev engine.Event) error {
	if format == FormatText {
		return nil
	}
	p := &printer{format: format, out: out}
	p.writeJSON(ev)
	return p.err
}

// printer writes events as they arrive.
type printer struct {
	format      Format
	out, errOut io.Writer
	// streamed says text of the current message was already printed as
	// deltas, so its assistant_message must not print it again.
	streamed bool
	// partial holds the first bytes of a UTF-8 character a text delta cut
	// in two, until the next delta completes it: escaped alone, they
	// would show as U+FFFD.
	partial  string
	wroteAny bool
	// patchFiles remembers the paths of each proposal (by patch id) from
	// patch_proposed and patch_applied, so that a later rejection or a
	// failed verification can name them.
	patchFiles map[string][]string
	err        error
}

func (p *printer) loop(ctx context.Context, sub *engine.Subscription) {
	for {
		batch, err := sub.NextBatch(ctx)
		if err != nil {
			return
		}
		for _, ev := range batch {
			p.print(ev)
			if ev.Type == engine.EventFinalResult {
				return
			}
		}
	}
}

func (p *printer) print(ev engine.Event) {
	if p.err != nil {
		return
	}
	switch p.format {
	case FormatStreamJSON:
		// The prompt is the caller's own input; like other agent CLIs, the
		// stream starts with session_started and does not echo it.
		if ev.Type != engine.EventUserMessage {
			p.writeJSON(ev)
		}
	case FormatJSON:
		if ev.Type == engine.EventFinalResult {
			p.writeJSON(ev)
		}
		p.printProblems(ev)
	default:
		p.printText(ev)
		p.printProblems(ev)
	}
}

func (p *printer) writeJSON(ev engine.Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		p.err = fmt.Errorf("encode event: %w", err)
		return
	}
	b = append(b, '\n')
	if _, err := p.out.Write(b); err != nil {
		p.err = fmt.Errorf("write output: %w", err)
	}
}

func (p *printer) printText(ev engine.Event) {
	var s string
	switch ev.Type {
	case engine.EventTextDelta:
		s, p.partial = splitIncomplete(p.partial + ev.Text)
		s, p.streamed = termsafe.Text(s), true
	case engine.EventAssistantMessage:
		if !p.streamed {
			s = termsafe.Text(ev.Text)
		} else {
			s = termsafe.Text(p.partial)
		}
		p.streamed, p.partial = false, ""
	case engine.EventFinalResult:
		s, p.partial = termsafe.Text(p.partial), ""
		if p.wroteAny || s != "" {
			s += "\n"
		}
	}
	if s == "" {
		return
	}
	p.wroteAny = true
	// The model's text is printed on a terminal as it is, and escape
	// sequences in it (the text format's C0 and C1 controls, DEL) would
	// act there: rewrite the window title, set the clipboard (OSC 52),
	// overwrite a line with \r. They are shown visibly instead, keeping
	// newlines and tabs; json and stream-json need none of this, their
	// encoder escapes every control character.
	if _, err := io.WriteString(p.out, s); err != nil {
		p.err = fmt.Errorf("write output: %w", err)
	}
}

// printProblems reports errors and denials on the error stream, where a
// person running kz -p looks for them.
func (p *printer) printProblems(ev engine.Event) {
	var s string
	switch {
	case ev.Type == engine.EventError:
		s = "kz: error: " + ev.Text + "\n"
	case ev.Type == engine.EventNotice:
		s = "kz: " + ev.Stage + ": " + ev.Text + "\n"
	case ev.Type == engine.EventSessionStarted && ev.Text != "":
		// kz's own runtimes put the model catalog's warning here (an
		// unknown model gets conservative limits and no price).
		s = "kz: warning: " + ev.Text + "\n"
	case ev.Type == engine.EventPermissionDecided && ev.Decision == engine.DecisionDeny:
		what := ev.Tool
		if ev.Command != "" {
			what += " " + ev.Command
		}
		s = fmt.Sprintf("kz: denied %s (%s: %s)\n", what, ev.Stage, ev.Reason)
	case ev.Type == engine.EventPatchProposed || ev.Type == engine.EventPatchApplied:
		p.rememberPatch(ev)
	case ev.Type == engine.EventPatchRejected:
		s = p.rejection(ev)
	case ev.Type == engine.EventCommandFinished && ev.PatchID != "" && ev.ExitCode != nil && *ev.ExitCode != 0:
		s = p.failedVerify(ev)
	case ev.Type == engine.EventFinalResult && ev.Status != string(engine.StatusComplete):
		s = "kz: turn ended: " + ev.Status + "\n"
	}
	if s != "" {
		// The lines hold what the model or a tool wrote (commands, error
		// texts, reasons), shown on a terminal whatever the format, so
		// their control characters are shown visibly too.
		_, _ = io.WriteString(p.errOut, termsafe.Text(s))
	}
}

// splitIncomplete splits s before an incomplete UTF-8 character at its
// end (at most 3 bytes), which the next text delta may complete.
func splitIncomplete(s string) (whole, rest string) {
	for i := len(s) - 1; i >= 0 && i >= len(s)-3; i-- {
		if c := s[i]; c < 0x80 {
			break
		} else if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i], s[i:]
			}
			break
		}
	}
	return s, ""
}
