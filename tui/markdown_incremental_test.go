package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/themes"
)

// incrementalCorpus is markdown of every kind of block the incremental
// renderer cuts between or must not cut inside: code fences (with blank
// lines, with tabs, a longer fence holding a shorter one, tildes), lists
// (loose, nested, ordered), tables, nested quotes, headings, rules,
// indented code, search/replace blocks, and a fence left open.
var incrementalCorpus = map[string]string{
	"paragraphs": "First paragraph with `code` and **bold**.\n\nSecond paragraph,\nwrapped over two lines.\n\n# Heading\n\nText after the heading.\n",
	"fences":     "Before.\n\n```go\nfunc main() {\n\n\tfmt.Println(\"hi\")\n}\n```\n\nBetween.\n\n````md\n```\nnot a close\n```\n````\n\n~~~\ntilde fence\n\n~~~\n\nAfter.\n",
	"lists":      "- one\n- two\n  - nested\n\n- loose item\n\n  continued paragraph\n\n1. first\n2. second\n\n3. third after a blank\n\nEnd.\n",
	"tables":     "| a | b |\n|---|---|\n| 1 | 2 |\n| three | four |\n\nText.\n\n| x |\n|---|\n| y |\n",
	"quotes":     "> quoted\n> > nested quote\n> back\n\n> another quote\n\nplain\n",
	"mixed":      "## Plan\n\n1. Read `main.go`\n2. Fix it\n\n```diff\n-old\n+new\n```\n\n---\n\n    indented code\n\n    more indented code\n\nDone.\n",
	"edit-block": "Here is the change:\n\nmain.go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 2\n>>>>>>> REPLACE\n\nThat is all.\n",
	"open-fence": "Start.\n\n```python\ndef f():\n\n    return 1\n",
	"open-edit":  "Change:\n\n<<<<<<< SEARCH\na\n=======\n",
	"refs":       "See [the docs][d] and [this][x].\n\nMore text.\n\n[d]: https://example.com/docs\n[x]: https://example.com/x \"X\"\n",
	"setext":     "Title\n=====\n\nSub\n---\n\ntext\n",
	"numbered":   "Steps:\n\n3. third\n4. fourth\n\n10) tenth\n\n- a\n\n* b\n\n+ c\n",
}

// TestIncrementalRenderEqualsFullRender streams each document in deltas of
// several sizes and checks that the finished message renders exactly as
// one render of the whole text does, at several widths.
func TestIncrementalRenderEqualsFullRender(t *testing.T) {
	t.Parallel()
	th := themes.MustResolve("dark", false)
	for name, src := range incrementalCorpus {
		for _, width := range []int{40, 80, 120} {
			want := newMDRenderer(th.Markdown).render(src, width)
			for _, size := range []int{1, 3, 17, 64, len(src)} {
				r := newMDRenderer(th.Markdown)
				var d mdDoc
				now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				for i := 0; i < len(src); i += size {
					d.Append(src[i:min(i+size, len(src))])
					// Render while streaming, as frames do.
					now = now.Add(streamFrameInterval)
					_ = d.Lines(r, width, now, false, false)
				}
				d.Finish()
				got := d.Lines(r, width, now, false, false)
				if visible(got) != visible(want) {
					t.Errorf("%s at width %d in deltas of %d:\n--- incremental\n%s\n--- full\n%s", name, width, size,
						ansi.Strip(strings.Join(got, "\n")), ansi.Strip(strings.Join(want, "\n")))
				}
			}
		}
	}
}

// emptySpan is a style set and reset before any text: it shows nothing.
var emptySpan = regexp.MustCompile(`\x1b\[[0-9;:]*m\x1b\[0?m`)

// visible is what lines show, styles included: the style spans that
// enclose no text are dropped (glamour opens the document's style before
// each block and a chunk's render may begin without it).
func visible(lines []string) string {
	s := strings.Join(lines, "\n")
	for {
		t := emptySpan.ReplaceAllString(s, "")
		if t == s {
			return s
		}
		s = t
	}
}
