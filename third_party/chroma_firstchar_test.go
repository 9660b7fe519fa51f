package thirdparty

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// The chroma fork passes over a lexer rule whose expression cannot begin
// a match with the character at the current position, using the
// first-character set regexp2 computes for the expression (see
// third_party/chroma/firstchar.go). Highlighting stays the same only if no
// rule is ever passed over where its expression matches.
// TestChromaFirstCharsNeverSkipAMatch runs every rule of every lexer at
// every position the set excludes and requires no match there: under the
// lexer of each language of the markdown corpus's code blocks, that code
// and the code of all the other blocks; under every lexer, a line of every
// printable ASCII character and some non-ASCII text. Under the race
// detector, which makes the sweep ten times slower, each corpus language's
// lexer gets only its own code and the line of characters, and no other
// lexer is swept.

// fenced matches a fenced code block of the corpus and its language.
var fenced = regexp.MustCompile("(?ms)^```([^\\n]*)\\n(.*?)^```")

func TestChromaFirstCharsNeverSkipAMatch(t *testing.T) {
	t.Parallel()
	var chars strings.Builder
	for c := byte(' '); c < 0x7f; c++ {
		chars.WriteByte(c)
	}
	chars.WriteString("\n\t日本語 é 🚀\r\n")
	var all strings.Builder
	samples := map[string][]string{}
	for _, name := range []string{"code-languages.md", "code-data.md"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "mdcorpus", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fenced.FindAllStringSubmatch(string(b), -1) {
			samples[m[1]] = append(samples[m[1]], m[2])
			all.WriteString(m[2])
		}
	}
	skipped := 0
	for _, l := range lexers.GlobalLexerRegistry.All() {
		rl, ok := l.(*chroma.RegexLexer)
		if !ok {
			continue
		}
		var texts []string
		for _, alias := range append([]string{strings.ToLower(rl.Config().Name)}, rl.Config().Aliases...) {
			if own := samples[alias]; len(own) > 0 {
				texts = append(texts, chars.String())
				if raceEnabled {
					texts = append(texts, own...)
				} else {
					texts = append(texts, all.String())
				}
				break
			}
		}
		if texts == nil && !raceEnabled {
			texts = []string{chars.String()}
		}
		rules, err := rl.CompiledRules()
		if err != nil {
			t.Fatalf("%s: %v", rl.Config().Name, err)
		}
		for state, rs := range rules {
			for i, rule := range rs {
				for _, text := range texts {
					runes := []rune(text)
					for pos := range runes {
						if rule.MayMatchAt(runes, pos) {
							continue
						}
						skipped++
						m, err := rule.Regexp.FindRunesMatchStartingAt(runes, pos)
						if err == nil && m != nil && m.Index == pos {
							t.Errorf("%s %s.%d %q: passed over at %d, where it matches %q", rl.Config().Name, state, i, rule.Pattern, pos, m.String())
						}
					}
				}
			}
		}
	}
	if skipped == 0 {
		t.Fatal("no rule was ever passed over: the first-character sets are not in use")
	}
	t.Logf("%d rule runs passed over", skipped)
}
