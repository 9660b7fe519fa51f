// Package scripted is a deterministic runtime that replays a JSONL script.
// Tests, benchmarks and the demo use it; it needs no model and no network.
//
// A script is one JSON object per line:
//
//   - An optional header first: {"kz_script": 1, "model": "m",
//     "capabilities": ["text_completion", ...], "context_window": 0, ...,
//     "reports_cost": true}.
//     Without a header the runtime declares every capability a full agent has.
//   - Event lines: public event objects, the same JSON that
//     `kz -p --output-format stream-json` prints. session_id, seq, time and
//     turn_id are assigned by kz and ignored here. A permission_requested line
//     does not print itself: it asks the session (gate, then person) and
//     waits for the answer. A final_result line ends the turn with its status
//     and output.
//   - Directive lines: {"cycle": true} starts a model cycle (the session
//     enforces --max-cycles there); {"fail": {"kind": "rate_limit",
//     "message": "..."}} fails the turn with a classified error;
//     {"sleep_ms": N} waits; {"end_turn": true} separates turns: turn k of a
//     runtime plays segment k modulo the number of segments;
//     {"task": {"prompt": "...", "runtime": "r", "read_only": true, ...},
//     "tool_call_id": "t1"} delegates to a subagent as the native runtime's
//     task tool does (tool_call_started, the child turn, tool_call_finished
//     with its answer).
//
// Any line may carry "delay_ms" (wait before it), "repeat" (play it N
// times) and "when": "allow" or "deny" (play it only if the last permission
// answer was that). Blank lines and lines starting with "//" are skipped.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/trickle"
)

// Runtime replays a script. It is safe for one turn at a time, like every
// runtime.
//
// The script is read twice, line by line, and never held as parsed lines:
// Load and Parse check every line and note where each turn's segment
// starts; a turn then reads its segment again from there and plays each
// line as it decodes it. So a script of any length costs the process the
// read buffer and the line being played, not a parsed copy of the whole
// script kept alive for the session (a 20,000-line stream held 18 MB that
// way, and its decoding allocated six times as much).
type Runtime struct {
	name     string
	model    string
	caps     engine.Capabilities
	src      source
	file     string
	segments []segment

	mu    sync.Mutex
	turns int
}

// line is one parsed script line: an event, a directive, or both options.
type line struct {
	engine.Event
	DelayMS int      `json:"delay_ms,omitempty"`
	Repeat  int      `json:"repeat,omitempty"`
	When    string   `json:"when,omitempty"`
	Cycle   bool     `json:"cycle,omitempty"`
	Fail    *failure `json:"fail,omitempty"`
	SleepMS int      `json:"sleep_ms,omitempty"`
	EndTurn bool     `json:"end_turn,omitempty"`
	// Task spawns a child turn (see Turn.SpawnChild).
	Task *engine.TaskInput `json:"task,omitempty"`
}

type failure struct {
	Kind         engine.ErrorKind `json:"kind"`
	Message      string           `json:"message,omitempty"`
	RetryAfterMS int              `json:"retry_after_ms,omitempty"`
}

type header struct {
	Version       int           `json:"kz_script"`
	Model         string        `json:"model,omitempty"`
	Capabilities  engine.CapSet `json:"capabilities"`
	ContextWindow int           `json:"context_window,omitempty"`
	MaxOutput     int           `json:"max_output,omitempty"`
	InputPerMTok  float64       `json:"input_per_mtok,omitempty"`
	OutputPerMTok float64       `json:"output_per_mtok,omitempty"`
	LatencyMS     int           `json:"latency_ms,omitempty"`
	// ReportsCost says the script's usage_updated lines carry the cost,
	// as a runtime that prices its own turns does.
	ReportsCost bool `json:"reports_cost,omitempty"`
}

// FullAgent is what a script without a header declares.
var FullAgent = engine.NewCapSet(engine.CapTextCompletion, engine.CapStreamingText, engine.CapStructuredOutput,
	engine.CapNativeToolLoop, engine.CapFunctionTools, engine.CapFilesystemRead, engine.CapFilesystemEdit,
	engine.CapShell, engine.CapInterrupt)

// MaxLineBytes bounds one script line.
const MaxLineBytes = 16 << 20

// Load checks a script file and notes its turns; each turn reads its part
// of the file again when it plays (a file changed since is refused then).
// Errors name the file and line.
func Load(name, path string) (*Runtime, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scripted runtime: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("scripted runtime: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("scripted runtime: %s is not a regular file", path)
	}
	return parse(name, path, f, fileSource{path: path, size: fi.Size(), mod: fi.ModTime()})
}

// Parse reads a script from r; file names it in errors. The script is
// kept in memory as the bytes read, since a reader cannot be read again.
func Parse(name, file string, r io.Reader) (*Runtime, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return parse(name, file, bytes.NewReader(data), memSource(data))
}

// parse checks every line of the script in r and records where each
// segment starts; src reads the same bytes again for Run.
func parse(name, file string, r io.Reader, src source) (*Runtime, error) {
	rt := &Runtime{name: name, model: "scripted", caps: engine.Capabilities{Set: FullAgent}, src: src, file: file,
		segments: []segment{{off: 0, line: 1}}}
	sawContent, sawLine, segLines := false, false, 0
	var l line
	err := scanLines(r, file, 1, func(n int, next int64, raw []byte) (bool, error) {
		if !sawContent && bytes.Contains(raw, []byte(`"kz_script"`)) {
			sawContent = true
			if err := rt.parseHeader(raw); err != nil {
				return false, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			// The first segment starts after the header.
			rt.segments[0] = segment{off: next, line: n + 1}
			return false, nil
		}
		sawContent, sawLine = true, true
		if err := parseLine(raw, &l, decodeStrict); err != nil {
			return false, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		if l.EndTurn {
			rt.segments = append(rt.segments, segment{off: next, line: n + 1})
			segLines = 0
			return false, nil
		}
		segLines++
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	// A script that plays nothing (no lines, or a header alone) is a
	// mistake, most often the wrong file: a turn from it would end
	// "complete" having said nothing.
	if !sawLine {
		return nil, fmt.Errorf("%s: empty script (no event or directive lines)", file)
	}
	// Nothing after the last end_turn is no turn of its own.
	if segLines == 0 && len(rt.segments) > 1 {
		rt.segments = rt.segments[:len(rt.segments)-1]
	}
	return rt, nil
}

func (rt *Runtime) parseHeader(raw []byte) error {
	var h header
	if err := decodeStrict(raw, &h); err != nil {
		return fmt.Errorf("bad header: %w", err)
	}
	if h.Version != 1 {
		return fmt.Errorf("bad header: kz_script version %d (this kz reads version 1)", h.Version)
	}
	if h.Model != "" {
		rt.model = h.Model
	}
	rt.caps = engine.Capabilities{Set: h.Capabilities, ContextWindow: h.ContextWindow, MaxOutput: h.MaxOutput,
		InputPerMTok: h.InputPerMTok, OutputPerMTok: h.OutputPerMTok, LatencyMS: h.LatencyMS, ReportsCost: h.ReportsCost}
	return nil
}

// parseLine decodes raw into *l, which it first clears, and checks it.
// The two passes over a script share one line each, so that a script of
// 20,000 deltas does not allocate 20,000 copies of an event twice (more
// than a quarter of all that a streamed answer allocated in kz's TUI,
// and the collections that cost). Load decodes with decodeStrict; a turn replaying lines Load
// checked decodes with decodeChecked.
func parseLine(raw []byte, l *line, decode func([]byte, any) error) error {
	*l = line{}
	if err := decode(raw, l); err != nil {
		return err
	}
	return l.check()
}

// check reports a decoded line that is not one event or one directive,
// or whose options are out of range.
func (l *line) check() error {
	directives := 0
	for _, set := range []bool{l.Cycle, l.Fail != nil, l.SleepMS > 0, l.EndTurn, l.Task != nil} {
		if set {
			directives++
		}
	}
	switch {
	case l.Type == "" && directives == 0:
		return errors.New(`line has neither an event "type" nor a directive (cycle, fail, sleep_ms, end_turn, task)`)
	case l.Type != "" && directives > 0, directives > 1:
		return errors.New("a line is one event or one directive, not several")
	case l.Type != "" && !l.Type.Valid():
		return fmt.Errorf("unknown event type %q", l.Type)
	case l.When != "" && l.When != "allow" && l.When != "deny":
		return fmt.Errorf(`"when" must be "allow" or "deny", not %q`, l.When)
	case l.DelayMS < 0 || l.Repeat < 0 || l.SleepMS < 0:
		return errors.New("delay_ms, repeat and sleep_ms cannot be negative")
	case l.Fail != nil && l.Fail.Kind == "":
		return fmt.Errorf(`"fail" needs a "kind" (%s)`, kindList())
	case l.Fail != nil && !slices.Contains(errorKinds, l.Fail.Kind):
		return fmt.Errorf(`unknown "fail" kind %q (use %s)`, l.Fail.Kind, kindList())
	case l.Type == engine.EventFinalResult && l.Status != "" && !slices.Contains(statuses, engine.Status(l.Status)):
		return fmt.Errorf(`unknown final_result status %q (use %s)`, l.Status, statusList())
	}
	return nil
}

// errorKinds are the failure kinds a "fail" directive may name: the
// engine's ErrorKind constants. A kind the engine does not know would be
// classified as nothing (never retried, never explained), so it is refused
// here; a kind added to the engine must be added to this list too.
var errorKinds = []engine.ErrorKind{
	engine.ErrRuntimeMissing, engine.ErrCrashed, engine.ErrAuth, engine.ErrRateLimit, engine.ErrOverloaded,
	engine.ErrContextTooLong, engine.ErrBadRequest, engine.ErrDenied, engine.ErrInterrupted, engine.ErrCapability,
	engine.ErrInternal, engine.ErrProtocol, engine.ErrLimitReached, engine.ErrInvalidArgument,
}

// statuses are the final_result statuses of ARCHITECTURE.md, the only ones
// a final_result line may end a turn with.
var statuses = []engine.Status{
	engine.StatusComplete, engine.StatusInterrupted, engine.StatusError,
	engine.StatusMaxCycles, engine.StatusBudgetExceeded, engine.StatusTimeout,
}

func kindList() string {
	names := make([]string, len(errorKinds))
	for i, k := range errorKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func statusList() string {
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

// decodeStrict decodes one JSON object: unknown fields and trailing data are
// errors, so a typo in a script is reported instead of silently ignored.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed line: %w", jsonProblem(err))
	}
	if dec.More() {
		return errors.New("malformed line: trailing data after the JSON object")
	}
	return nil
}

// decodeChecked decodes a line that Load has decoded strictly before:
// the same bytes (a source refuses a file changed since, see fileSource),
// so the unknown-field check, which costs the strict decoder a reader and
// a buffer per line, would find nothing. The line is still checked.
func decodeChecked(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("malformed line: %w", jsonProblem(err))
	}
	return nil
}

// jsonProblem rewrites a decoding error in the script's terms: the JSON
// field and the kind of value it wants, never the Go types behind them.
// The decoder's error stays reachable with errors.As.
func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var msg string
	switch {
	case errors.As(err, &te):
		if field := jsonField(te.Field); field != "" {
			msg = fmt.Sprintf("%s: want %s, got %s", field, jsonKind(te.Type.Kind()), te.Value)
		} else {
			article := "a"
			if v := te.Value; v != "" && strings.ContainsAny(v[:1], "aeiou") {
				article = "an"
			}
			msg = fmt.Sprintf("each line must be a JSON object, not %s %s", article, te.Value)
		}
	case errors.As(err, &se):
		msg = fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		msg = "not valid JSON: the object is cut short"
	default:
		// The decoder's own messages (json: unknown field "x") say what
		// is wrong; only the package prefix is noise.
		msg = strings.TrimPrefix(err.Error(), "json: ")
	}
	return &decodeError{msg: msg, err: err}
}

// decodeError is a decoding error with a message written for the script's
// author.
type decodeError struct {
	msg string
	err error
}

func (e *decodeError) Error() string { return e.msg }
func (e *decodeError) Unwrap() error { return e.err }

// jsonField drops the Go names of embedded structs from a decoder's field
// path ("Event.type" is the line's "type"): JSON names in scripts are
// lower case, Go's struct names are not.
func jsonField(path string) string {
	var keep []string
	for _, part := range strings.Split(path, ".") {
		if r, _ := utf8.DecodeRuneInString(part); part != "" && !unicode.IsUpper(r) {
			keep = append(keep, part)
		}
	}
	return strings.Join(keep, ".")
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// Name implements engine.Runtime.
func (rt *Runtime) Name() string { return rt.name }

// Model returns the model the script declares.
func (rt *Runtime) Model() string { return rt.model }

// Capabilities implements engine.Runtime; a script declares one set for
// every model.
func (rt *Runtime) Capabilities(string) engine.Capabilities { return rt.caps }

// Run implements engine.Runtime. It reads the turn's segment from the
// script line by line and plays each line as it is read, so a long stream
// never exists in memory as a whole.
func (rt *Runtime) Run(ctx context.Context, t *engine.Turn) (engine.Result, error) {
	rt.mu.Lock()
	seg := rt.segments[rt.turns%len(rt.segments)]
	rt.turns++
	rt.mu.Unlock()

	model := t.Model
	if model == "" {
		model = rt.model
	}
	res := engine.Result{Status: engine.StatusComplete, Model: model}
	r, err := rt.src.open(seg.off)
	if err != nil {
		return res, fmt.Errorf("scripted runtime: %w", err)
	}
	defer func() { _ = r.Close() }()
	p := player{rt: rt, t: t, model: model, res: res, last: engine.DecisionAllow, first: true}
	var l line
	err = scanLines(r, rt.file, seg.line, func(n int, _ int64, raw []byte) (bool, error) {
		if err := parseLine(raw, &l, decodeChecked); err != nil {
			// Only a script changed under kz gets here: Load checked
			// every line.
			return true, fmt.Errorf("%s:%d: %w", rt.file, n, err)
		}
		if l.EndTurn {
			return true, nil
		}
		return p.play(ctx, l)
	})
	if p.first {
		// An empty segment still starts its turn.
		t.Emit(engine.Event{Type: engine.EventSessionStarted, Model: model})
	}
	if err != nil {
		return p.res, fmt.Errorf("scripted runtime: %w", err)
	}
	return p.res, p.err
}

// player plays the lines of one turn.
type player struct {
	rt    *Runtime
	t     *engine.Turn
	model string
	res   engine.Result
	last  engine.Decision
	// first is set until the first line played: a turn whose script does
	// not start with session_started gets one.
	first bool
	// err is the turn's error, set with the result when a line ends it.
	err error
	// due is when the last line was due on the script's timeline (see
	// wait); zero restarts the timeline at the next line.
	due time.Time
	// gate, read and held pace the lines as a reader of a real stream
	// reads them (see wait): read is when the last batch was taken, held
	// when the next may be.
	gate       trickle.Gate
	read, held time.Time
}

// play plays one line; stop ends the turn, with p.res and p.err set.
func (p *player) play(ctx context.Context, l line) (stop bool, err error) {
	if p.first {
		p.first = false
		if l.Type != engine.EventSessionStarted {
			p.t.Emit(engine.Event{Type: engine.EventSessionStarted, Model: p.model})
		}
	}
	if l.When != "" && string(p.last) != l.When {
		return false, nil
	}
	t := p.t
	for range max(l.Repeat, 1) {
		if stop, err := p.wait(ctx, l.DelayMS+l.SleepMS); stop || err != nil {
			p.res, p.err = engine.Result{Status: engine.StatusInterrupted, Model: p.model}, err
			return true, nil
		}
		switch {
		case l.Cycle:
			if err := t.StartCycle(); err != nil {
				p.err = err
				return true, nil
			}
		case l.Fail != nil:
			p.err = &engine.RuntimeError{Kind: l.Fail.Kind, Runtime: p.rt.name, Model: p.model,
				Message: l.Fail.Message, RetryAfter: time.Duration(l.Fail.RetryAfterMS) * time.Millisecond}
			return true, nil
		case l.SleepMS > 0:
		case l.Task != nil:
			p.last = runTask(ctx, t, l)
			p.due = time.Time{}
		case l.Type == engine.EventPermissionRequested:
			a := t.RequestPermission(ctx, engine.PermissionRequest{ToolCallID: l.ToolCallID, Tool: l.Tool,
				Input: l.Input, Command: l.Command, Paths: l.Paths, Diff: l.Diff, Write: isWrite(l.Event)})
			p.last = a.Decision
			p.due = time.Time{}
		case l.Type == engine.EventFinalResult:
			if l.Status != "" {
				p.res.Status = engine.Status(l.Status)
			}
			if l.Output != "" {
				p.res.Output = l.Output
			}
			return true, nil
		default:
			ev := l.Event
			ev.SessionID, ev.Seq, ev.Time, ev.TurnID = "", 0, time.Time{}, 0
			if ev.Type == engine.EventAssistantMessage {
				p.res.Output = ev.Text
			}
			t.Emit(ev)
		}
	}
	return false, nil
}

// runTask plays a task line: the call, the child turn, the result. A
// child that could not start or did not complete is an error result, and
// the line's "when" followers see it as a deny.
func runTask(ctx context.Context, t *engine.Turn, l line) engine.Decision {
	in := *l.Task
	id := l.ToolCallID
	if id == "" {
		id = "task-" + engine.NewID()
	}
	input, _ := json.Marshal(in)
	t.Emit(engine.Event{Type: engine.EventToolCallStarted, ToolCallID: id, Tool: engine.TaskToolName, Input: input})
	res, err := t.SpawnChild(ctx, engine.ChildRequest{ToolCallID: id, Prompt: in.Prompt, Runtime: in.Runtime, Model: in.Model,
		Description: in.Description, ReadOnly: in.ReadOnly, Limits: engine.Limits{MaxCycles: in.MaxCycles, BudgetUSD: in.BudgetUSD,
			Timeout: time.Duration(in.TimeoutSeconds * float64(time.Second))}})
	out, failed := "", true
	if err != nil {
		out = err.Error()
	} else {
		out, failed = engine.TaskResultText(res)
	}
	status := engine.ToolStatusOK
	if failed {
		status = engine.ToolStatusError
	}
	t.Emit(engine.Event{Type: engine.EventToolCallFinished, ToolCallID: id, Tool: engine.TaskToolName, Status: status, Output: out, IsError: failed})
	if failed {
		return engine.DecisionDeny
	}
	return engine.DecisionAllow
}

// maxLag is how far behind its timeline a turn may fall and still catch
// up by playing the lines that are due without sleeping; further behind
// (the process was stopped, the machine stalled) the timeline restarts
// from now, so that a stall never turns into one burst of everything.
const maxLag = 100 * time.Millisecond

// wait sleeps until ms milliseconds after the previous line was due
// (p.due), so a script's timeline holds however late the timers fire: a
// stream of deltas 1 ms apart plays 1,000 a second, not one per timer
// wake-up, which on a loaded machine came every 1.4 ms. Lines that wait
// for someone (a permission answer, a subagent) restart the timeline when
// they end (see play). It reports stop when the turn was asked to stop
// gracefully, and the context's error when it was cancelled.
//
// A line that arrives ms after the previous one is played as kz's
// runtimes read a real stream (trickle.Reader): while lines come densely,
// they are taken in batches a trickle.Window apart (a trickle.Hold once
// they have come densely for a trickle.Settle), each time all that
// arrived, and a line with no delay of its own comes with the line
// before it.
func (p *player) wait(ctx context.Context, ms int) (stop bool, err error) {
	now := time.Now()
	if p.due.IsZero() || now.Sub(p.due) > maxLag {
		p.due, p.read, p.held = now, time.Time{}, time.Time{}
	}
	p.due = p.due.Add(time.Duration(ms) * time.Millisecond)
	if !p.due.After(p.read) {
		// It arrived before the last batch was taken: it is part of it.
		return wait(ctx, p.t, 0)
	}
	from := now
	if p.held.After(from) {
		from = p.held
	}
	until := p.due
	if from.After(until) {
		until = from
	}
	stop, err = wait(ctx, p.t, until.Sub(now))
	p.read, p.held = time.Now(), time.Time{}
	// What a reader waiting for this line would have blocked for, once
	// its gate let it read.
	if hold := p.gate.After(p.read, max(p.due.Sub(from), 0), true); hold > 0 {
		p.held = p.read.Add(hold)
	}
	return stop, err
}

// wait sleeps for d; it reports stop when the turn was asked to stop
// gracefully, and the context's error when it was cancelled.
func wait(ctx context.Context, t *engine.Turn, d time.Duration) (stop bool, err error) {
	select {
	case <-t.Graceful:
		return true, nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("scripted runtime: %w", err)
	}
	if d <= 0 {
		return false, nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return false, nil
	case <-t.Graceful:
		return true, nil
	case <-ctx.Done():
		return false, fmt.Errorf("scripted runtime: %w", ctx.Err())
	}
}

// isWrite guesses whether a scripted permission request changes files: a
// request naming paths with a diff, or a write-type built-in tool.
func isWrite(ev engine.Event) bool {
	switch ev.Tool {
	case "write_file", "edit_file", "Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch":
		return true
	}
	return ev.Diff != ""
}
