package thirdparty

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// TestChromaForkRegistryUnchanged holds the lexer registry of the chroma
// fork, whose lexers written in Go are built when the registry loads
// instead of in package initialisation (README.md), to what it held when
// they were built at start: every lexer in the same order (which decides
// ties when text is analysed and filenames are matched) with the same
// names, aliases, filenames and MIME types, and the same answers to
// lookups by name and by filename. The golden file was written by this
// test's dump from the fork before that change.
func TestChromaForkRegistryUnchanged(t *testing.T) {
	var b strings.Builder
	for _, l := range lexers.GlobalLexerRegistry.All() {
		c := l.Config()
		fmt.Fprintf(&b, "%s|%v|%v|%v|%v\n", c.Name, c.Aliases, c.Filenames, c.AliasFilenames, c.MimeTypes)
	}
	for _, n := range []string{"go", "markdown", "php", "html", "cl", "emacs", "go-text-template", "go-html-template",
		"http", "svelte", "raku", "rst", "haxe", "genshi", "caddyfile", "typoscript"} {
		fmt.Fprintf(&b, "get %s -> %s\n", n, lexers.Get(n).Config().Name)
	}
	for _, fn := range []string{"x.go", "x.md", "x.php", "x.html", "x.lisp", "x.el", "Caddyfile", "x.hx", "x.svelte",
		"x.rst", "x.raku", "x.ts"} {
		if l := lexers.Match(fn); l != nil {
			fmt.Fprintf(&b, "match %s -> %s\n", fn, l.Config().Name)
		}
	}
	want, err := os.ReadFile("testdata/chroma_registry.golden")
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("registry differs at line %d:\n got  %q\n want %q", i+1, g, w)
			}
		}
	}
}

// The Go lexer's rules reach the Go Text Template lexer, now built on
// first use, for the template actions in raw strings.
func TestChromaForkGoRawStringTemplate(t *testing.T) {
	it, err := chroma.Coalesce(lexers.Get("go")).Tokenise(nil, "x := `a {{ .Name }} b`\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for tok := it(); tok != chroma.EOF; tok = it() {
		got = append(got, fmt.Sprintf("%v %q", tok.Type, tok.Value))
	}
	want := []string{`NameOther "x"`, `Text " "`, `Operator ":="`, `Text " "`, "LiteralString \"`a \"", `CommentPreproc "{{"`,
		`TextWhitespace " "`, `NameAttribute ".Name"`, `TextWhitespace " "`, `CommentPreproc "}}"`, "LiteralString \" b`\"", `Text "\n"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tokens:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
