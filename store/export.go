package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// Export is a whole session in a portable form.
type Export struct {
	Session    SessionInfo              `json:"session"`
	Turns      []TurnInfo               `json:"turns"`
	Transcript []engine.TranscriptEntry `json:"transcript"`
}

// LoadExport reads everything an export shows.
func (s *Store) LoadExport(ctx context.Context, idOrPrefix string) (*Export, error) {
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
	return &Export{Session: si, Turns: turns, Transcript: tr}, nil
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
		x.Session.ID, x.Session.Workspace, x.Session.Created.UTC().Format("2006-01-02 15:04:05 UTC"), x.Session.Turns, x.Session.CostUSD)
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
			_, _ = fmt.Fprintf(&b, "\n**Tool** `%s` %s: %s\n", e.Tool, fence(string(e.Input)), e.Status)
			if e.Output != "" {
				_, _ = fmt.Fprintf(&b, "\n```\n%s\n```\n", strings.TrimRight(e.Output, "\n"))
			}
		case engine.EntryDecision:
			_, _ = fmt.Fprintf(&b, "\n> permission %s for `%s`: %s\n", e.Status, e.Tool, e.Text)
		case engine.EntryPatch, engine.EntryMarker:
			_, _ = fmt.Fprintf(&b, "\n---\n*%s*\n\n---\n", e.Text)
		case engine.EntryError:
			_, _ = fmt.Fprintf(&b, "\n> **error** (%s): %s\n", e.Status, e.Text)
		case engine.EntryTurnEnd:
			_, _ = fmt.Fprintf(&b, "\n*turn %d: %s*\n", e.TurnID, e.Status)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("export markdown: %w", err)
	}
	return nil
}

func label(runtime, model string) string {
	if model == "" {
		return runtime
	}
	return runtime + "/" + model
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
