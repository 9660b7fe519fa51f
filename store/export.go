package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/termsafe"
)

// Export is a whole session in a portable form.
type Export struct {
	Session    SessionInfo              `json:"session"`
	Turns      []TurnInfo               `json:"turns"`
	Transcript []engine.TranscriptEntry `json:"transcript"`
	// Events is the event log as stored: every event kz -p
	// --output-format stream-json printed is here, with the same sequence
	// number (deltas as they were stored, which is how they were printed).
	Events []engine.Event `json:"events"`
	// Children are the subagent sessions the session spawned, oldest
	// first; each is a session of its own (kz sessions show ID).
	Children []SessionInfo `json:"children,omitempty"`
}

// LoadExport reads everything an export shows.
func (s *Store) LoadExport(ctx context.Context, idOrPrefix string) (_ *Export, err error) {
	defer s.noteDamage(&err)
	si, err := s.Session(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	turns, err := s.Turns(ctx, si.ID)
	if err != nil {
		return nil, err
	}
	tr, err := s.Transcript(ctx, si.ID)
	if err != nil {
		return nil, err
	}
	x := &Export{Session: si, Turns: turns, Transcript: tr, Events: []engine.Event{}}
	if err := s.Events(ctx, si.ID, func(ev engine.Event) error { x.Events = append(x.Events, ev); return nil }); err != nil {
		return nil, err
	}
	if x.Children, err = s.ListChildren(ctx, si.ID); err != nil {
		return nil, err
	}
	return x, nil
}

// WriteJSON writes the export as indented JSON.
func (x *Export) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x); err != nil {
		return fmt.Errorf("export json: %w", err)
	}
	return nil
}

// WriteMarkdown writes the conversation as Markdown: each turn with the
// prompt, the answers, tool calls with their results, decisions and markers.
func (x *Export) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := x.Session.Title
	if title == "" {
		title = "(untitled)"
	}
	_, _ = fmt.Fprintf(&b, "# %s\n\n", title)
	_, _ = fmt.Fprintf(&b, "- session: `%s`\n- workspace: `%s`\n- created: %s\n- turns: %d\n- cost: $%.4f\n",
		x.Session.ID, x.Session.Workspace, x.Session.Created.Local().Format(exportLayout), x.Session.Turns, x.Session.CostUSD)
	// A decision is recorded after its tool call started, but it came
	// first: it is written just before the call it answered.
	decisions := map[string][]engine.TranscriptEntry{}
	calls := map[string]bool{}
	for _, e := range x.Transcript {
		if e.Kind == engine.EntryToolCall && e.ToolCallID != "" {
			calls[e.ToolCallID] = true
		}
	}
	for _, e := range x.Transcript {
		if e.Kind == engine.EntryDecision && calls[e.ToolCallID] {
			decisions[e.ToolCallID] = append(decisions[e.ToolCallID], e)
		}
	}
	decision := func(e engine.TranscriptEntry) {
		_, _ = fmt.Fprintf(&b, "\n> permission %s for `%s`: %s\n", e.Status, e.Tool, e.Text)
	}
	for _, e := range x.Transcript {
		switch e.Kind {
		case engine.EntryUser:
			_, _ = fmt.Fprintf(&b, "\n## Turn %d\n\n**You** (%s):\n\n%s\n", e.TurnID, label(e.Runtime, e.Model), e.Text)
		case engine.EntryAssistant:
			partial := ""
			if e.Status == "partial" {
				partial = ", cut short"
			}
			_, _ = fmt.Fprintf(&b, "\n**Assistant** (%s%s):\n\n%s\n", label(e.Runtime, e.Model), partial, e.Text)
		case engine.EntryToolCall:
			for _, d := range decisions[e.ToolCallID] {
				decision(d)
			}
			_, _ = fmt.Fprintf(&b, "\n**Tool** `%s` %s: %s\n", e.Tool, fence(string(e.Input)), e.Status)
			if e.Output != "" {
				out := strings.TrimRight(e.Output, "\n")
				ticks := codeFence(out)
				_, _ = fmt.Fprintf(&b, "\n%s\n%s\n%s\n", ticks, out, ticks)
			}
		case engine.EntryDecision:
			if !calls[e.ToolCallID] {
				decision(e)
			}
		case engine.EntryPatch, engine.EntryMarker:
			_, _ = fmt.Fprintf(&b, "\n---\n*%s*\n\n---\n", e.Text)
		case engine.EntryError:
			_, _ = fmt.Fprintf(&b, "\n> **error** (%s): %s\n", e.Status, e.Text)
		case engine.EntryNotice:
			_, _ = fmt.Fprintf(&b, "\n> **%s**: %s\n", e.Status, strings.ReplaceAll(e.Text, "\n", "\n> "))
			if e.Output != "" {
				_, _ = fmt.Fprintf(&b, ">\n> told the model: %s\n", strings.ReplaceAll(e.Output, "\n", "\n> "))
			}
		case engine.EntryTurnEnd:
			_, _ = fmt.Fprintf(&b, "\n*turn %d: %s*\n", e.TurnID, e.Status)
		}
	}
	// The export is read on terminals too (kz sessions export ID): escape
	// sequences a prompt, a model or a tool's output carried are shown,
	// not run (an OSC 52 would write the clipboard).
	if _, err := io.WriteString(w, termsafe.Text(b.String())); err != nil {
		return fmt.Errorf("export markdown: %w", err)
	}
	return nil
}

// Dates are written in the person's zone (time.Local, which TZ sets): the
// list and the summary to the minute, like the TUI's session picker; the
// Markdown export, a document that travels, with its UTC offset.
const (
	listLayout   = "2006-01-02 15:04"
	exportLayout = "2006-01-02 15:04 -07:00"
)

// WriteSessionList writes sessions as a table, newest first.
func WriteSessionList(w io.Writer, list []SessionInfo) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tRUNTIME\tCOST\tTITLE")
	for _, s := range list {
		title := s.Title
		if s.Children > 0 {
			// Subagent sessions are not listed; their parent counts them.
			title = strings.TrimSpace(fmt.Sprintf("%s (+%d subagent%s)", title, s.Children, map[bool]string{true: "", false: "s"}[s.Children == 1]))
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t$%.4f\t%s\n", s.ID, s.Updated.Local().Format(listLayout), s.Turns,
			label(s.Runtime, s.Model), s.CostUSD, title)
	}
	return tw.Flush()
}

// WriteSummary writes the session's facts and a table of its turns; a turn
// whose status is still empty is shown as running.
func (x *Export) WriteSummary(w io.Writer) error {
	s := x.Session
	_, _ = fmt.Fprintf(w, "session   %s\ntitle     %s\nworkspace %s\nruntime   %s\nmode      %s\ncreated   %s\nupdated   %s\nevents    %d\ncost      $%.4f\n",
		s.ID, s.Title, s.Workspace, label(s.Runtime, s.Model), s.Mode,
		s.Created.Local().Format(listLayout), s.Updated.Local().Format(listLayout), s.LastSeq, s.CostUSD)
	if s.Parent != "" {
		_, _ = fmt.Fprintf(w, "parent    %s (tool call %s)\n", s.Parent, s.ParentToolCallID)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "\nTURN\tSTATUS\tRUNTIME\tCYCLES\tCOST\tPROMPT")
	for _, t := range x.Turns {
		status := t.Status
		if status == "" {
			status = "running"
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t$%.4f\t%s\n", t.TurnID, status, label(t.Runtime, t.Model), t.Cycles, t.CostUSD, firstLine(t.Prompt, 60))
	}
	if len(x.Children) > 0 {
		_, _ = fmt.Fprintln(tw, "\nSUBAGENT\tTOOL CALL\tRUNTIME\tMODE\tCOST\tDESCRIPTION")
		for _, c := range x.Children {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t$%.4f\t%s\n", c.ID, c.ParentToolCallID, label(c.Runtime, c.Model), c.Mode, c.CostUSD, firstLine(c.Title, 60))
		}
	}
	return tw.Flush()
}

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "…"
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func label(runtime, model string) string {
	if model == "" {
		return runtime
	}
	return runtime + "/" + model
}

// codeFence is a fence longer than any run of backticks in s, so output
// that holds a fence of its own cannot end the block early.
func codeFence(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// fence quotes inline text with enough backticks that it cannot break out.
func fence(s string) string {
	if s == "" {
		return ""
	}
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + " " + s + " " + ticks
}
