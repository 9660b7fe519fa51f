package tui

import (
	"runtime"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/kaizen-code/kz/themes"
)

// A render must be a pure function of the source, the width and the
// style: a chunked render is compared with a whole one, a frame with the
// frame before, and the golden files with every run. These tests hold the
// three places where kz's chroma and glamour forks used to let something
// else in (see third_party/README.md).

// TestChromaNearestColourIsStable formats a token whose colour lies
// exactly halfway between two xterm colours (#676767, between 241 and 242,
// the comment colour of glamour's dark style) many times: the pick must
// not follow Go's random map order.
func TestChromaNearestColourIsStable(t *testing.T) {
	t.Parallel()
	style := chroma.MustNewStyle("tie", chroma.StyleEntries{chroma.Comment: "#676767", chroma.Keyword: "#5f87af bold"})
	f := formatters.Get("terminal256")
	var first string
	for i := range 300 {
		var b strings.Builder
		it, err := chroma.Coalesce(lexers.Get("go")).Tokenise(nil, "func f() {} // note\n")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Format(&b, style, it); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.String()
			if !strings.Contains(first, "\x1b[38;5;241m// note") {
				t.Fatalf("the comment is not in the first of equally near colours (241): %q", first)
			}
		} else if b.String() != first {
			t.Fatalf("format %d differs from the first:\n%q\n%q", i, b.String(), first)
		}
	}
}

// TestChromaHighlightStartsNoClock tokenises code and then looks for the
// clock goroutine regexp2 runs for match timeouts. Without a clock no
// deadline exists, so no rule can be skipped because the machine was slow
// or the clock had gone stale: that skip coloured the same code
// differently under load (the flake of TestIncrementalRenderEqualsFullRender).
func TestChromaHighlightStartsNoClock(t *testing.T) {
	for _, lang := range []string{"go", "python", "bash", "diff", "markdown"} {
		it, err := chroma.Coalesce(lexers.Get(lang)).Tokenise(nil, "x = 1 # a\nfunc f() { return \"s\" }\n")
		if err != nil {
			t.Fatal(err)
		}
		for tok := it(); tok != chroma.EOF; tok = it() {
			if tok.Type == chroma.Error && strings.TrimSpace(tok.Value) == "" {
				t.Errorf("%s: error token %q", lang, tok.Value)
			}
		}
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "regexp2.runClock") {
		t.Fatalf("highlighting started regexp2's timeout clock:\n%s", stacks)
	}
}

// TestCodeBlockColoursFollowTheTheme renders the same code block with two
// themes in turn: each keeps its own code colours, whichever theme
// rendered code first in the process.
func TestCodeBlockColoursFollowTheTheme(t *testing.T) {
	t.Parallel()
	src := "```go\n// comment\nfunc f() {}\n```\n"
	render := func(name string) string {
		th := themes.MustResolve(name, false)
		return strings.Join(newMDRenderer(th.Markdown).render(src, 60), "\n")
	}
	dark, light, dark2 := render("dark"), render("light"), render("dark")
	hc := render("high-contrast")
	if dark != dark2 {
		t.Fatalf("dark rendered differently after light:\n%q\n%q", dark, dark2)
	}
	if dark == light || dark == hc {
		t.Fatalf("themes share code colours:\ndark %q\nlight %q\nhigh-contrast %q", dark, light, hc)
	}
	// High contrast's comments are #d0d0d0, xterm 252.
	if !strings.Contains(hc, "\x1b[38;5;252m// comment") {
		t.Errorf("high-contrast comment colour not used: %q", hc)
	}
}
