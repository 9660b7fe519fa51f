package store

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestMarkdownExportReadsInOrder: a permission decision is written before
// the tool call it answered (it is recorded after the call started), and
// tool output holding a code fence of its own stays inside its block.
func TestMarkdownExportReadsInOrder(t *testing.T) {
	t.Parallel()
	x := &Export{Session: SessionInfo{ID: "s1", Title: "fix"}, Transcript: []engine.TranscriptEntry{
		{Seq: 1, TurnID: 1, Kind: engine.EntryUser, Text: "fix it"},
		{Seq: 2, TurnID: 1, Kind: engine.EntryToolCall, ToolCallID: "c1", Tool: "bash", Input: []byte(`{"command":"cat README.md"}`),
			Output: "# readme\n```go\nfmt.Println()\n```\n", Status: "ok"},
		{Seq: 3, TurnID: 1, Kind: engine.EntryDecision, ToolCallID: "c1", Tool: "bash", Status: "allow", Text: "allowed by the person"},
		{Seq: 4, TurnID: 1, Kind: engine.EntryDecision, ToolCallID: "gone", Tool: "bash", Status: "deny", Text: "denied"},
		{Seq: 5, TurnID: 1, Kind: engine.EntryAssistant, Text: "Done."},
	}}
	var b strings.Builder
	if err := x.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	allow, tool, deny, done := strings.Index(md, "permission allow"), strings.Index(md, "**Tool** `bash`"), strings.Index(md, "permission deny"), strings.Index(md, "Done.")
	if allow < 0 || tool < 0 || allow > tool {
		t.Errorf("the decision does not come before its tool call:\n%s", md)
	}
	if deny < tool || deny > done {
		t.Errorf("a decision without its call is not kept in place:\n%s", md)
	}
	if !strings.Contains(md, "\n````\n# readme\n```go\nfmt.Println()\n```\n````\n") {
		t.Errorf("the output's own fence ends its block:\n%s", md)
	}
}

// TestMarkdownExportShowsEscapeSequences: what a prompt, a model or a tool
// printed reaches a terminal reading the export as visible text, never as
// sequences that set the title or write the clipboard.
func TestMarkdownExportShowsEscapeSequences(t *testing.T) {
	t.Parallel()
	x := &Export{Session: SessionInfo{ID: "s1", Title: "evil \x1b[31mtitle\x1b]0;T\x07"}, Transcript: []engine.TranscriptEntry{
		{Seq: 1, TurnID: 1, Kind: engine.EntryUser, Text: "hi\r\nthere"},
		{Seq: 2, TurnID: 1, Kind: engine.EntryToolCall, ToolCallID: "c1", Tool: "bash", Output: "out \x1b]52;c;ZXZpbA==\x07\n\tindented"},
	}}
	var b strings.Builder
	if err := x.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.ContainsAny(md, "\x1b\x07\r") {
		t.Fatalf("raw control characters in the export: %q", md)
	}
	if !strings.Contains(md, "\n\tindented") || !strings.Contains(md, `\x1b]52`) {
		t.Fatalf("layout lost or sequences not shown: %q", md)
	}
}
