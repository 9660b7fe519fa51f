package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kaizen-code/kz/themes"
)

// A search/replace proposal in an answer is shown as code, marker lines
// and all, however it was streamed: not as nested block quotes and a
// setext heading, which is what markdown makes of its markers.
func TestSearchReplaceBlocksRenderAsCode(t *testing.T) {
	src := "SUMMARY: rename the helper\n\n" +
		"app.go\n<<<<<<< SEARCH\nfunc old() {\n\n\treturn\n}\n=======\nfunc renamed() {\n\treturn\n}\n>>>>>>> REPLACE\n\n" +
		"And a fenced one stays as it is:\n\n```\nb.go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\nDone.\n"
	r := newMDRenderer(themes.MustResolve("dark", true).Markdown)
	for _, step := range []int{len(src), 1, 5, 13} {
		d := &mdDoc{}
		for i := 0; i < len(src); i += step {
			d.Append(src[i:min(i+step, len(src))])
		}
		d.Finish()
		var lines []string
		for _, l := range d.Lines(r, 80, time.Now(), true, false) {
			lines = append(lines, strings.TrimSpace(ansi.Strip(l)))
		}
		out := strings.Join(lines, "\n")
		for _, want := range []string{"<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "func old() {", "func renamed() {", "Done."} {
			if !containsLine(lines, want) {
				t.Errorf("step %d: no line %q in\n%s", step, want, out)
			}
		}
		if strings.Contains(out, "│ │") {
			t.Errorf("step %d: markers rendered as nested quotes:\n%s", step, out)
		}
		// The blank line inside the SEARCH text did not cut the block.
		for i, c := range d.cuts {
			if chunk := src[prevCut(d.cuts, i):c]; strings.Count(chunk, "SEARCH") != strings.Count(chunk, "REPLACE") {
				t.Errorf("step %d: chunk %q splits a search/replace block", step, chunk)
			}
		}
	}
}

func TestFenceEditBlocks(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"no block", "plain text\n", "plain text\n"},
		{"one block", "a.go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\ntail\n",
			"a.go\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\ntail\n"},
		{"unterminated", "<<<<<<< SEARCH\nx\n=======\ny", "```\n<<<<<<< SEARCH\nx\n=======\ny\n```\n"},
		{"already fenced", "~~~\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n~~~\n", "~~~\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n~~~\n"},
		{"backticks inside", "<<<<<<< SEARCH\n```go\n=======\n````\n>>>>>>> REPLACE\n",
			"`````\n<<<<<<< SEARCH\n```go\n=======\n````\n>>>>>>> REPLACE\n`````\n"},
		{"the word only", "use a SEARCH block\n", "use a SEARCH block\n"},
	} {
		if got := fenceEditBlocks(c.in); got != c.want {
			t.Errorf("%s: fenceEditBlocks(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func prevCut(cuts []int, i int) int {
	if i == 0 {
		return 0
	}
	return cuts[i-1]
}
