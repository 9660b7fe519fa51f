package tui

import (
	"flag"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/themes"
)

// incrementalCorpus is markdown of every kind of block the incremental
// renderer cuts between or must not cut inside: code fences (with blank
// lines, with tabs, a longer fence holding a shorter one, tildes), lists
// (loose, nested, ordered), tables, nested quotes, headings, rules,
// indented code, search/replace blocks, and a fence left open.
var incrementalCorpus = map[string]string{
	"paragraphs":   "First paragraph with `code` and **bold**.\n\nSecond paragraph,\nwrapped over two lines.\n\n# Heading\n\nText after the heading.\n",
	"fences":       "Before.\n\n```go\nfunc main() {\n\n\tfmt.Println(\"hi\")\n}\n```\n\nBetween.\n\n````md\n```\nnot a close\n```\n````\n\n~~~\ntilde fence\n\n~~~\n\nAfter.\n",
	"lists":        "- one\n- two\n  - nested\n\n- loose item\n\n  continued paragraph\n\n1. first\n2. second\n\n3. third after a blank\n\nEnd.\n",
	"tables":       "| a | b |\n|---|---|\n| 1 | 2 |\n| three | four |\n\nText.\n\n| x |\n|---|\n| y |\n",
	"quotes":       "> quoted\n> > nested quote\n> back\n\n> another quote\n\nplain\n",
	"mixed":        "## Plan\n\n1. Read `main.go`\n2. Fix it\n\n```diff\n-old\n+new\n```\n\n---\n\n    indented code\n\n    more indented code\n\nDone.\n",
	"edit-block":   "Here is the change:\n\nmain.go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 2\n>>>>>>> REPLACE\n\nThat is all.\n",
	"open-fence":   "Start.\n\n```python\ndef f():\n\n    return 1\n",
	"open-edit":    "Change:\n\n<<<<<<< SEARCH\na\n=======\n",
	"refs":         "See [the docs][d] and [this][x].\n\nMore text.\n\n[d]: https://example.com/docs\n[x]: https://example.com/x \"X\"\n",
	"setext":       "Title\n=====\n\nSub\n---\n\ntext\n",
	"numbered":     "Steps:\n\n3. third\n4. fourth\n\n10) tenth\n\n- a\n\n* b\n\n+ c\n",
	"nested-lists": "- a\n  - b\n    - c\n\n    deep paragraph\n\n  back in b\n\n- d\n\n  ```go\n  x := 1\n\n  y := 2\n  ```\n\nafter\n",
	"quote-code":   "> text\n>\n> ```sh\n> ls -l\n>\n> echo\n> ```\n\n> - item\n>\n> - item two\n\nout\n",
	"emphasis":     "Some *emphasis\nacross lines* and **strong\nacross** and `code\nspan` end.\n\n_under_ __score__ ~~strike~~\n",
	"breaks":       "hard break  \nnext line\\\nafter backslash\n\ntrailing spaces   \n\n   \n\ntext\n",
	"html":         "<details>\n<summary>More</summary>\n\nhidden text\n\n</details>\n\n<!-- a comment\n\nstill comment -->\n\n<pre>\nx\n\ny\n</pre>\n\ndone\n",
	"tasks-defs":   "- [ ] todo\n- [x] done\n\nTerm\n: definition\n\nOther\n: more\n\nend\n",
	"code-mixed":   "```python\n# comment\ndef f(x):\n    return x * 2  # twice\n```\n\n```\nno language\n\nat all\n```\n\n```bash\nfor i in 1 2; do echo \"$i\"; done\n```\n",
	"autolinks":    "See https://example.com and <https://x.y/z>.\n\nmail me@example.com\n",
	// Blocks that render blank or whitespace-only: a chunk made of one
	// must keep its lines and the blank lines around it.
	"blank-blocks": "0\n\n` `\n\n00\n\n`  `\n\n&#32;\n\n&nbsp;\n\n#\n\n>\n\n```\n```\n\n##\n\n` ` ` `\n\nend\n",
	"blank-first":  "` `\n\n#\n\ntext\n\n>\n\n```\n\n```\n",
	"code-ends":    "```\nx\n```\n\n` `\n\n    indented\n\n&#32;\n\n---\n\n#\n",
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

// mdSeed fixes the seed of the random splits below, to replay a failure:
// go test -run TestIncrementalRenderRandomSplits ./tui/ -args -md.seed=N
var mdSeed = flag.Int64("md.seed", 0, "seed of TestIncrementalRenderRandomSplits (0: a new one, logged)")

// TestIncrementalRenderRandomSplits streams every construct class of the
// corpus, and all of them run together, in random deltas at random widths
// with frames at random times, and checks each finished render against a
// whole one. The seed is logged, so a failure is replayed with -md.seed.
func TestIncrementalRenderRandomSplits(t *testing.T) {
	t.Parallel()
	seed := *mdSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay with -args -md.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	th := themes.MustResolve("dark", false)
	names := slices.Sorted(maps.Keys(incrementalCorpus))
	var all strings.Builder
	for _, n := range names {
		all.WriteString(incrementalCorpus[n] + "\n")
	}
	docs := append(slices.Clone(names), "all")
	for _, name := range docs {
		src := incrementalCorpus[name]
		if name == "all" {
			src = all.String()
		}
		for range 4 {
			width := 20 + rng.IntN(110)
			got := streamRender(th, src, width, func() int { return 1 + rng.IntN(40) }, func() bool { return rng.IntN(3) == 0 })
			want := newMDRenderer(th.Markdown).render(src, width)
			if visible(got) != visible(want) {
				t.Fatalf("seed %d: %s at width %d:\n--- incremental\n%q\n--- full\n%q", seed, name, width,
					strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// streamRender streams src into an mdDoc in deltas of next() bytes,
// rendering a frame after each delta (forced when force() says so), and
// returns the finished render.
func streamRender(th themes.Theme, src string, width int, next func() int, force func() bool) []string {
	r := newMDRenderer(th.Markdown)
	var d mdDoc
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < len(src); {
		j := min(i+next(), len(src))
		d.Append(src[i:j])
		i = j
		now = now.Add(frameInterval / 2)
		_ = d.Lines(r, width, now, force(), false)
	}
	d.Finish()
	return d.Lines(r, width, now, false, false)
}

// FuzzIncrementalRender checks, for any markdown, that a message streamed
// in deltas renders as the whole message does: the cuts between chunks
// must never fall where glamour's rendering depends on what surrounds
// them.
func FuzzIncrementalRender(f *testing.F) {
	for _, n := range slices.Sorted(maps.Keys(incrementalCorpus)) {
		f.Add(incrementalCorpus[n], uint8(7), uint8(60))
	}
	th := themes.MustResolve("dark", false)
	f.Fuzz(func(t *testing.T, src string, step, width uint8) {
		if len(src) > 4096 || !utf8.ValidString(src) {
			return
		}
		w := 20 + int(width)%100
		got := streamRender(th, src, w, func() int { return 1 + int(step)%64 }, func() bool { return false })
		want := newMDRenderer(th.Markdown).render(src, w)
		if visible(got) != visible(want) {
			t.Fatalf("width %d, deltas of %d:\n--- incremental\n%q\n--- full\n%q", w, 1+int(step)%64,
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
