package tui

import (
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// The chroma and glamour that kz builds with are forks in third_party (see
// third_party/README.md): chroma reads its lexers on first use instead of
// at program start and holds only the styles kz uses, glamour strips HTML
// without bluemonday.
// These tests hold the forks to upstream's behaviour.

func TestChromaForkLexersLoadOnFirstUse(t *testing.T) {
	for name, want := range map[string]string{"go": "Go", "python": "Python", "bash": "Bash", "yaml": "YAML"} {
		if lx := lexers.Get(name); lx == nil || lx.Config().Name != want {
			t.Errorf("Get(%q) = %v, want %s", name, lx, want)
		}
	}
	for file, want := range map[string]string{"main.rs": "Rust", "Makefile": "Makefile", "x.tsx": "TypeScript", "Dockerfile": "Docker"} {
		if lx := lexers.Match(file); lx == nil || lx.Config().Name != want {
			t.Errorf("Match(%q) = %v, want %s", file, lx, want)
		}
	}
	// The analysers upstream set in init functions are set on load.
	if lx := lexers.Analyse("$ORIGIN example.com.\n@ IN SOA ns1 admin 1 2 3 4 5\n"); lx == nil || lx.Config().Name != "dns" {
		t.Errorf("Analyse(zone file) = %v, want dns", lx)
	}
	// A lexer registered in Go (not XML) keeps priority over the XML one
	// of the same name, as when upstream loaded the XML first.
	if lx := lexers.Get("go"); lx.AnalyseText("package main\n") == 0 {
		t.Error("the Go lexer lost its analyser: the XML lexer replaced the Go one")
	}
	if n := len(lexers.Names(false)); n < 200 {
		t.Errorf("%d lexers, want the embedded set (over 200)", n)
	}
	if n := len(lexers.GlobalLexerRegistry.All()); n < 200 {
		t.Errorf("All() = %d lexers, want over 200", n)
	}
	// Tokenising still works end to end (rules are compiled lazily).
	it, err := chroma.Coalesce(lexers.Get("go")).Tokenise(nil, "func main() {}\n")
	if err != nil {
		t.Fatal(err)
	}
	var kw bool
	for tok := it(); tok != chroma.EOF; tok = it() {
		kw = kw || tok.Type == chroma.KeywordDeclaration && tok.Value == "func"
	}
	if !kw {
		t.Error("func was not lexed as a keyword")
	}
}

// The chroma copy holds only the styles kz names (see diffstyle.go; the
// markdown code blocks use glamour's own "charm" style) and the fallback.
func TestChromaForkStyles(t *testing.T) {
	if fb := styles.Fallback(); fb == nil || fb.Name != "swapoff" {
		t.Fatalf("Fallback() = %v, want swapoff", fb)
	}
	for _, name := range []string{"github", "github-dark", "swapoff"} {
		if s := styles.Get(name); s == nil || s.Name != name {
			t.Errorf("Get(%q) = %v", name, s)
		}
	}
	if styles.Get("no-such-style") != styles.Fallback() {
		t.Error("an unknown style must give the fallback")
	}
}

func TestGlamourForkStripsHTML(t *testing.T) {
	r := newMDRenderer(themeForBench().Markdown)
	for src, want := range map[string]string{
		"a <b>bold</b> word":                       "a bold word",
		"x &amp; y <i>and</i> z":                   "x & y and z",
		"<div>\nblock <span>text</span>\n</div>\n": "block text",
		// goldmark hands inline tags over one by one, so only the tags go
		// (upstream too); a block's script content goes with its tags.
		"keep <script>alert(1)</script>this":      "keep alert(1)this",
		"<script>\nalert(2)\n</script>\n\nafter2": "after2",
		"<style>p{color:red}</style>\n\nafter":    "after",
		"a <!-- note --> b":                       "a  b",
	} {
		got := ansi.Strip(strings.Join(r.render(src, 80), "\n"))
		if !strings.Contains(strings.Join(strings.Fields(got), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("render(%q) = %q, want it to read %q", src, got, want)
		}
		for _, bad := range []string{"<b>", "<script", "alert(2)", "color:red", "<!--"} {
			if strings.Contains(got, bad) {
				t.Errorf("render(%q) = %q: %q survived", src, got, bad)
			}
		}
	}
}
