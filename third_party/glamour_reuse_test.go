package thirdparty

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
)

// The glamour fork keeps its output buffer and its document buffer from
// one render to the next. TestGlamourRendererReuseMatchesFresh renders a
// sequence of documents with one renderer (short and long, one whose
// output passes the size above which a kept buffer is let go, and again
// short ones after it) and requires each output to be what a new renderer
// makes of the same document.
func TestGlamourRendererReuseMatchesFresh(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 400 {
		fmt.Fprintf(&long, "## Part %d\n\nSome *text* with `code`, wrapped at the width of the renderer when it is long enough to wrap.\n\n- a\n- b\n\n", i)
	}
	docs := []string{
		"# Title\n\nShort.\n",
		"```go\nfunc f() {}\n```\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
		long.String(),
		"Short again.\n",
		"# Title\n\nShort.\n",
	}
	r := newDarkRenderer(t)
	for i, doc := range docs {
		got, err := r.Render(doc)
		if err != nil {
			t.Fatal(err)
		}
		want, err := newDarkRenderer(t).Render(doc)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("document %d rendered by a reused renderer differs from a new renderer's render", i)
		}
	}
	if out, _ := newDarkRenderer(t).Render(long.String()); len(out) <= 1<<20 {
		t.Fatalf("the long document renders to %d bytes, not past the 1 MB a renderer keeps", len(out))
	}
}

// TestGlamourRendererAfterFailedRender renders a document that fails half
// way (an image whose format glamour's fork refuses, after a paragraph has
// been written to the document's buffer) and then another document with
// the same renderer: its output must not hold anything of the failed one.
func TestGlamourRendererAfterFailedRender(t *testing.T) {
	t.Parallel()
	style := styles.DarkStyleConfig
	style.Image = gansi.StylePrimitive{Format: "{{.text | ToUpper}}"}
	r, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(60))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render("A paragraph first.\n\n![logo](x.png)\n\nafter\n"); err == nil {
		t.Fatal("the image's format was accepted; the test needs a render that fails")
	}
	got, err := r.Render("Plain text.\n")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(60))
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Render("Plain text.\n")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("render after a failed one:\n got  %q\n want %q", got, want)
	}
}

func newDarkRenderer(t *testing.T) *glamour.TermRenderer {
	t.Helper()
	r, err := glamour.NewTermRenderer(glamour.WithStyles(styles.DarkStyleConfig), glamour.WithWordWrap(120))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
