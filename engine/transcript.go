package engine

import (
	"encoding/json"
	"strings"
)

// EntryKind names a runtime-neutral transcript entry.
type EntryKind string

// Transcript entry kinds.
const (
	EntryUser      EntryKind = "user"
	EntryAssistant EntryKind = "assistant"
	EntryReasoning EntryKind = "reasoning"
	EntryToolCall  EntryKind = "tool_call"
	EntryDecision  EntryKind = "decision"
	EntryPatch     EntryKind = "patch"
	EntryMarker    EntryKind = "marker"
	EntryError     EntryKind = "error"
	// EntryNotice is a notice (see EventNotice): Status names who gave it
	// and Output is what the model was told because of it, if anything.
	EntryNotice  EntryKind = "notice"
	EntryTurnEnd EntryKind = "turn_end"
)

// Tool call statuses in the transcript.
const (
	ToolStatusRunning     = "running"
	ToolStatusOK          = "ok"
	ToolStatusError       = "error"
	ToolStatusInterrupted = "interrupted"
	// InterruptedNotRerun is the result given to a tool call whose result
	// was never recorded (a crash or kill between call and result). Every
	// provider rejects a tool call without a result, so it is closed with
	// this text and never silently re-run.
	InterruptedNotRerun = "interrupted, not re-run"
)

// TranscriptEntry is one item of the runtime-neutral conversation that any
// runtime can be primed from: user turns, assistant text, tool calls with
// their results, decisions, patches and markers.
type TranscriptEntry struct {
	Seq        int64           `json:"seq"`
	TurnID     int64           `json:"turn_id"`
	Kind       EntryKind       `json:"kind"`
	Runtime    string          `json:"runtime,omitempty"`
	Model      string          `json:"model,omitempty"`
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	// Status is the tool call status, the decision, the patch outcome, the
	// marker's event type or the turn's final status.
	Status string `json:"status,omitempty"`
	// Images are a user entry's attached images. The store fills their
	// bytes back in when it loads a session, so a resumed session and the
	// runtime a switch hands it to see them as the first runtime did.
	Images []Image `json:"images,omitempty"`
}

// TranscriptBuilder folds events into transcript entries. The session keeps
// one in memory and the store applies the same fold when it persists, so
// both always agree on what the conversation was.
type TranscriptBuilder struct {
	Entries []TranscriptEntry
	// open maps a tool call id to its entry index while it runs.
	open map[string]int
	// pending accumulates text deltas not yet closed by assistant_message.
	pending      strings.Builder
	pendingFirst Event
}

// EntryOp says what an event does to the transcript.
type EntryOp int

// Transcript operations.
const (
	// OpNone: the event leaves the transcript as it is.
	OpNone EntryOp = iota
	// OpAppend: the entry is added at the end.
	OpAppend
	// OpFinishToolCall: the tool call entry with the same ToolCallID gets
	// the entry's Output, IsError and Status (or the entry is appended when
	// no such call was started).
	OpFinishToolCall
)

// TranscriptOp maps one event to its transcript operation. It is the one
// definition of what the runtime-neutral conversation holds: the in-memory
// builder and the store both apply it.
func TranscriptOp(ev Event) (EntryOp, TranscriptEntry) {
	e := TranscriptEntry{Seq: ev.Seq, TurnID: ev.TurnID, Runtime: ev.Runtime, Model: ev.Model}
	switch ev.Type {
	case EventUserMessage:
		e.Kind, e.Text, e.Images = EntryUser, ev.Text, ev.Images
	case EventAssistantMessage:
		e.Kind, e.Text = EntryAssistant, ev.Text
		if ev.Partial {
			e.Status = "partial"
		}
	case EventToolCallStarted:
		e.Kind, e.ToolCallID, e.Tool, e.Input, e.Status = EntryToolCall, ev.ToolCallID, ev.Tool, ev.Input, ToolStatusRunning
	case EventToolCallFinished:
		e.Kind, e.ToolCallID, e.Tool, e.Input = EntryToolCall, ev.ToolCallID, ev.Tool, ev.Input
		e.Output, e.IsError = ev.Output, ev.IsError
		switch {
		case ev.Status != "":
			e.Status = ev.Status
		case ev.IsError:
			e.Status = ToolStatusError
		default:
			e.Status = ToolStatusOK
		}
		return OpFinishToolCall, e
	case EventPermissionDecided:
		e.Kind, e.ToolCallID, e.Tool, e.Status, e.Text = EntryDecision, ev.ToolCallID, ev.Tool, string(ev.Decision), ev.Reason
		if ev.Feedback != "" {
			e.Text = ev.Feedback
		}
		if ev.Command != "" {
			e.Input, _ = json.Marshal(map[string]string{"command": ev.Command})
		}
	case EventPatchApplied, EventPatchRejected:
		e.Kind, e.Status, e.Text = EntryPatch, string(ev.Type), ev.Text
	case EventRuntimeSwitched, EventModeChanged:
		e.Kind, e.Status, e.Text = EntryMarker, string(ev.Type), markerText(ev)
	case EventCompactBoundary:
		// Output is the summary that replaces the conversation before the
		// marker for later turns (see CompactedHistory); empty when the
		// compaction lasted only for the turn that made it.
		e.Kind, e.Status, e.Text, e.Output = EntryMarker, string(ev.Type), markerText(ev), ev.Output
	case EventConversationRewound:
		// Input keeps the rewind's target and the last turn before it,
		// which RewoundHistory and a resumed session read.
		e.Kind, e.Status, e.Text = EntryMarker, string(ev.Type), ev.Text
		e.Input, _ = json.Marshal(rewindMark{Turn: ev.RewindTurn, Last: ev.LastTurn})
	case EventError:
		e.Kind, e.Text, e.Status = EntryError, ev.Text, string(ev.ErrorKind)
	case EventNotice:
		e.Kind, e.Text, e.Status, e.Output = EntryNotice, ev.Text, ev.Stage, ev.Feedback
	case EventFinalResult:
		e.Kind, e.Status, e.Text = EntryTurnEnd, ev.Status, ev.Output
	default:
		return OpNone, e
	}
	return OpAppend, e
}

// Apply folds one event in.
func (b *TranscriptBuilder) Apply(ev Event) {
	switch ev.Type {
	case EventTextDelta:
		if b.pending.Len() == 0 {
			b.pendingFirst = ev
		}
		b.pending.WriteString(ev.Text)
		return
	case EventUserMessage, EventAssistantMessage:
		b.pending.Reset()
	case EventToolCallStarted, EventRuntimeSwitched, EventModeChanged, EventCompactBoundary, EventConversationRewound:
		b.flushPending()
	case EventFinalResult:
		b.flushPending()
		b.closeOpen()
	}
	op, e := TranscriptOp(ev)
	switch op {
	case OpAppend:
		b.Entries = append(b.Entries, e)
		if e.Kind == EntryToolCall && e.ToolCallID != "" {
			if b.open == nil {
				b.open = map[string]int{}
			}
			b.open[e.ToolCallID] = len(b.Entries) - 1
		}
	case OpFinishToolCall:
		i, ok := b.open[e.ToolCallID]
		if !ok {
			b.Entries = append(b.Entries, e)
			return
		}
		delete(b.open, e.ToolCallID)
		x := &b.Entries[i]
		x.Output, x.IsError, x.Status = e.Output, e.IsError, e.Status
	}
}

// CloseInterrupted ends a transcript whose last turn never finished: text
// deltas become a partial assistant entry and running tool calls are closed
// as interrupted, not re-run.
func (b *TranscriptBuilder) CloseInterrupted() {
	b.flushPending()
	b.closeOpen()
}

func (b *TranscriptBuilder) flushPending() {
	if b.pending.Len() == 0 {
		return
	}
	ev := b.pendingFirst
	b.Entries = append(b.Entries, TranscriptEntry{
		Seq: ev.Seq, TurnID: ev.TurnID, Kind: EntryAssistant, Runtime: ev.Runtime, Model: ev.Model,
		Text: b.pending.String(), Status: "partial",
	})
	b.pending.Reset()
}

func (b *TranscriptBuilder) closeOpen() {
	for id, i := range b.open {
		e := &b.Entries[i]
		e.Status, e.Output, e.IsError = ToolStatusInterrupted, InterruptedNotRerun, true
		delete(b.open, id)
	}
}

func markerText(ev Event) string {
	switch ev.Type {
	case EventRuntimeSwitched:
		return "runtime " + ev.From + " → " + ev.To + " (" + ev.Reason + ")"
	case EventModeChanged:
		return "mode " + ev.From + " → " + string(ev.Mode)
	default:
		return ev.Text
	}
}
