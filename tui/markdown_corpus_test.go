package tui

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"charm.land/glamour/v2"
	"github.com/kaizen-code/kz/themes"
)

// updateCorpus rewrites the expected renders of the markdown corpus. They
// were generated from glamour before its block writers were optimised, so
// rewriting them is only right for a deliberate change of output.
var updateCorpus = flag.Bool("update-mdcorpus", false, "rewrite testdata/mdcorpus/expected")

// corpusCase is one render of the corpus: a document at a width in a theme.
type corpusCase struct {
	theme   themes.Name
	noColor bool
	width   int
}

func (c corpusCase) String() string {
	return fmt.Sprintf("%s nocolor=%v width=%d", c.theme, c.noColor, c.width)
}

// smallCases are the renders of every small document: each theme, the
// colourless variant, and widths from narrower than most words to wider
// than most lines. Large documents get fewer, to keep the test quick under
// the race detector.
var (
	smallCases = []corpusCase{
		{themes.Dark, false, 17}, {themes.Dark, false, 40}, {themes.Dark, false, 80}, {themes.Dark, false, 200},
		{themes.Light, false, 33}, {themes.Light, false, 120},
		{themes.HighContrast, false, 29}, {themes.HighContrast, false, 100},
		{themes.Dark, true, 45}, {themes.Dark, true, 160},
	}
	largeCases = []corpusCase{{themes.Dark, false, 80}, {themes.Light, false, 137}}
)

// markdownCorpus returns the documents of the byte-identity test: every
// construct class of the incremental corpus alone and all together, the
// hand-written files in testdata/mdcorpus (non-ASCII text, deep nesting,
// and three of the project's own documents as real prose), and generated
// answers like the ones the streaming benchmarks use.
func markdownCorpus(t *testing.T) (small, large map[string]string) {
	t.Helper()
	small, large = map[string]string{}, map[string]string{}
	var all strings.Builder
	for _, n := range slices.Sorted(maps.Keys(incrementalCorpus)) {
		small["construct-"+n] = incrementalCorpus[n]
		all.WriteString(incrementalCorpus[n] + "\n")
	}
	small["constructs-all"] = all.String()
	small["generated-answer"] = benchMarkdown(6 << 10)
	for seed := range uint64(4) {
		small[fmt.Sprintf("random-%d", seed)] = randomMarkdown(seed, 6<<10)
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "mdcorpus", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		if len(b) > 8<<10 {
			large[name] = string(b)
		} else {
			small[name] = string(b)
		}
	}
	return small, large
}

// TestMarkdownCorpusByteIdentical renders a varied corpus with the glamour
// fork, exactly as kz's markdown renderer configures it, and compares the
// raw output, every escape sequence and padding space included, with the
// output the fork produced before its writers were reworked for speed
// (testdata/mdcorpus/expected, one gzip file per document). Any change in
// bytes fails, so an optimisation cannot change what a terminal shows.
func TestMarkdownCorpusByteIdentical(t *testing.T) {
	t.Parallel()
	small, large := markdownCorpus(t)
	check := func(name, src string, cases []corpusCase) {
		var got bytes.Buffer
		for _, c := range cases {
			th := themes.MustResolve(string(c.theme), c.noColor)
			tr, err := glamour.NewTermRenderer(glamour.WithStyles(th.Markdown), glamour.WithWordWrap(c.width))
			if err != nil {
				t.Fatal(err)
			}
			out, err := tr.Render(src)
			if err != nil {
				t.Fatalf("%s %v: %v", name, c, err)
			}
			fmt.Fprintf(&got, "=== %v\n%s\n", c, out)
		}
		path := filepath.Join("..", "testdata", "mdcorpus", "expected", name+".gz")
		if *updateCorpus {
			writeGzip(t, path, got.Bytes())
			return
		}
		want := readGzip(t, path)
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: render differs from %s: %s", name, path, firstDiff(got.String(), string(want)))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(small)) {
		check(name, small[name], smallCases)
	}
	for _, name := range slices.Sorted(maps.Keys(large)) {
		check(name, large[name], largeCases)
	}
}

// randomPieces are the inline pieces randomMarkdown builds text from:
// plain and non-ASCII words, every inline style (nested too), links, code
// spans, long words that must be broken, and raw escape sequences and
// control bytes of the kind a model's answer can carry.
var randomPieces = []string{
	"word", "words", "a", "the", "configuration", "é", "日本語", "🚀", "e\u0301", "Ünïcödé",
	"**bold**", "*italic*", "***both***", "~~strike~~", "`code`", "`a  b`", "**bold with `code` in it**",
	"*em **strong** em*", "[link](https://example.com/a)", "<https://example.com/auto>", "https://bare.example.com/x",
	"Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbau", "averyveryveryverylongidentifier_without_breaks",
	"a-b-c", "x,y;z", "1+2|3", "\\*escaped\\*", "&amp;", "<b>html</b>", "\x1b[31mred\x1b[0m", "tab\there",
}

// randomMarkdown returns a document of about size bytes of random blocks
// (paragraphs, headings, nested lists, quotes, code blocks in several
// languages, tables, rules), the same for the same seed: it covers the
// combinations of nesting, styling and wrapping the hand-written corpus
// does not.
func randomMarkdown(seed uint64, size int) string {
	rng := rand.New(rand.NewPCG(seed, 21))
	text := func(n int) string {
		words := make([]string, n)
		for i := range words {
			words[i] = randomPieces[rng.IntN(len(randomPieces))]
		}
		return strings.Join(words, " ")
	}
	langs := []string{"go", "python", "sh", "json", "", "rust", "diff", "yaml"}
	code := []string{"x := f(1, \"s\") // c", "if a < b { return nil }", "def f(x): return x  # c", "echo \"$HOME\" | wc -l",
		"{\"k\": [1, 2.5, true]}", "let v: Vec<u8> = vec![];", "+added\n-removed", "key: value # c", "\tindented\twith tabs", "日本語 = 1"}
	var b strings.Builder
	for b.Len() < size {
		switch rng.IntN(8) {
		case 0:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", 1+rng.IntN(6)), text(1+rng.IntN(6)))
		case 1, 2:
			fmt.Fprintf(&b, "%s\n\n", text(5+rng.IntN(60)))
		case 3:
			for range 1 + rng.IntN(4) {
				indent := strings.Repeat("  ", rng.IntN(3))
				marker := []string{"- ", "* ", "1. ", "- [ ] ", "- [x] "}[rng.IntN(5)]
				fmt.Fprintf(&b, "%s%s%s\n", indent, marker, text(1+rng.IntN(20)))
			}
			b.WriteString("\n")
		case 4:
			for range 1 + rng.IntN(3) {
				fmt.Fprintf(&b, "%s %s\n", strings.Repeat(">", 1+rng.IntN(3)), text(1+rng.IntN(25)))
			}
			b.WriteString("\n")
		case 5:
			fmt.Fprintf(&b, "```%s\n", langs[rng.IntN(len(langs))])
			for range 1 + rng.IntN(6) {
				fmt.Fprintf(&b, "%s%s\n", strings.Repeat(" ", rng.IntN(6)), code[rng.IntN(len(code))])
			}
			b.WriteString("```\n\n")
		case 6:
			cols := 1 + rng.IntN(4)
			row := func(cell func() string) {
				for range cols {
					fmt.Fprintf(&b, "| %s ", cell())
				}
				b.WriteString("|\n")
			}
			row(func() string { return text(1 + rng.IntN(2)) })
			row(func() string { return "---" })
			for range 1 + rng.IntN(3) {
				row(func() string { return text(1 + rng.IntN(5)) })
			}
			b.WriteString("\n")
		default:
			b.WriteString("---\n\n")
		}
	}
	return b.String()
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %q\n want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(g), len(w))
}

func writeGzip(t *testing.T, path string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -run MarkdownCorpus -update-mdcorpus, only for a deliberate change of output)", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
