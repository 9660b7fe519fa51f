package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/internal/eventlog"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools"
)

// twentyLines is a file whose lines 2 and 19 an edit changes: far enough
// apart to make two hunks.
func twentyLines(change2, change19 string) string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		switch {
		case i == 2 && change2 != "":
			b.WriteString(change2 + "\n")
		case i == 19 && change19 != "":
			b.WriteString(change19 + "\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// keepHunk answers a write's review as a person who rejects every hunk
// but the one numbered keep: the answer names the file as the review
// does and the kept hunk by its index in the request's diff.
func keepHunk(t *testing.T, keep int, seen *[]engine.Event) func(engine.Event) engine.Answer {
	return func(ev engine.Event) engine.Answer {
		*seen = append(*seen, ev)
		if !ev.Write {
			return engine.Answer{Decision: engine.DecisionAllow}
		}
		if n := len(diff.FileHunks(ev.Diff)); n != 2 || ev.Selection != engine.SelectionContent {
			t.Errorf("%s: %d hunks, selection %q, diff:\n%s", ev.Tool, n, ev.Selection, ev.Diff)
		}
		sel := &engine.PatchSelection{Files: []engine.FileSelection{{Path: tools.DiffName(ev.Diff), Hunks: []int{keep}}}}
		return engine.Answer{Decision: engine.DecisionAllow, Patch: sel}
	}
}

// Rejecting one hunk of two of Claude's Edit, Write and MultiEdit lands
// exactly the other on disk: kz answers can_use_tool with an updatedInput
// that the real CLI carries out.
func TestRealPartialWriteLandsKeptHunk(t *testing.T) {
	edit := func(ws string) map[string]any {
		old := strings.Join(strings.SplitAfter(twentyLines("", ""), "\n")[1:19], "")
		return map[string]any{"file_path": filepath.Join(ws, "a.txt"), "old_string": old,
			"new_string": strings.Replace(strings.Replace(old, "line 2\n", "TWO\n", 1), "line 19\n", "NINETEEN\n", 1)}
	}
	cases := []struct {
		tool  string
		input func(ws string) map[string]any
		keep  int
		want  string
	}{
		{"Edit", edit, 1, twentyLines("", "NINETEEN")},
		{"Write", func(ws string) map[string]any {
			return map[string]any{"file_path": filepath.Join(ws, "a.txt"), "content": twentyLines("TWO", "NINETEEN")}
		}, 0, twentyLines("TWO", "")},
		{"MultiEdit", func(ws string) map[string]any {
			return map[string]any{"file_path": filepath.Join(ws, "a.txt"), "edits": []map[string]any{
				{"old_string": "line 2\n", "new_string": "TWO\n"}, {"old_string": "line 19\n", "new_string": "NINETEEN\n"}}}
		}, 1, twentyLines("", "NINETEEN")},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			var ws string
			api := newFakeAPI(t, func(r *apiRequest) fakeReply {
				switch strings.Count(string(mustJSON(r.Messages)), `"tool_result"`) {
				case 0:
					return fakeReply{Tools: []fakeTool{{ID: "toolu_read", Name: "Read", Input: map[string]string{"file_path": filepath.Join(ws, "a.txt")}}}}
				case 1:
					return fakeReply{Tools: []fakeTool{{ID: "toolu_write", Name: c.tool, Input: c.input(ws)}}}
				}
				res, _ := r.toolResult()
				return fakeReply{Text: "saw: " + contentText(res.Content)}
			})
			rt, w := realSetup(t, api)
			ws = w
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(twentyLines("", "")), 0o644); err != nil {
				t.Fatal(err)
			}
			var seen []engine.Event
			h := newHarness(t, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Answer: keepHunk(t, c.keep, &seen)})
			final := h.Run(t, context.Background(), "edit a.txt")
			if got := readFile(t, filepath.Join(ws, "a.txt")); got != c.want {
				if c.tool == "MultiEdit" && strings.Contains(textOf(h.Journal.Events(), engine.EventAssistantMessage), "No such tool") {
					t.Skip("this CLI version has no MultiEdit")
				}
				t.Fatalf("a.txt after %s with one hunk kept (status %s):\n%s\nwant:\n%s\nmodel saw: %s", c.tool, final.Status, got, c.want, textOf(h.Journal.Events(), engine.EventAssistantMessage))
			}
			if res := lastToolResult(t, api); res.IsError {
				t.Errorf("the model saw an error: %s", contentText(res.Content))
			}
			if c.tool == "Edit" {
				// The question as the real CLI's Edit makes it is kept
				// for the TUI's review tests (internal/eventlog). The
				// Read before it is asked too (the session has no rule
				// gate, and the fallback gate allows unasked only kz's
				// own read tools) but is no part of the review.
				var writes []engine.Event
				for _, ev := range h.Journal.OfType(engine.EventPermissionRequested) {
					if ev.Write {
						writes = append(writes, ev)
					}
				}
				d, err := eventlog.Check(eventlog.Path("../..", "claude-code.edit-review"), writes, ws, *updateEvents)
				if err != nil || d != "" {
					t.Errorf("recorded events: %v %s", err, d)
				}
			}
			var asked int
			for _, ev := range seen {
				if ev.Write {
					asked++
				}
			}
			if asked != 1 {
				t.Errorf("asked about %d writes, want 1", asked)
			}
		})
	}
}
