package chroma

// kz fork: this file is not in upstream chroma.

import (
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/dlclark/regexp2/syntax"
)

// firstChars is the set of characters a rule's regular expression can
// begin a match with, so that matchRules can pass over a rule that cannot
// match at the current position without running it.
//
// Every rule is compiled with a leading \G, so regexp2 tries it at one
// position only, and for such an anchored expression it skips its own
// first-character test (it uses that test only to find where an
// unanchored match may start) and runs the matching program from the
// start for every rule at every position. A lexer state has tens of rules
// and most fail on their first character, so that work was most of the
// lexing time of a code block.
//
// The set is the one regexp2 computes for the same expression
// (syntax.Code.FcPrefix) and uses for unanchored searches: a character
// outside it cannot begin a match. A rule gets no set, and is always run,
// when the expression can match the empty string (regexp2 computes no set
// then), when the set is case-insensitive (regexp2 folds the text's case
// before testing those, a step kept out of here), or when the expression
// runs right to left.
type firstChars struct {
	// re is the expression the set belongs to: a rule whose Regexp is
	// replaced later is run without the set.
	re *regexp2.Regexp
	// ascii holds the set's answer for every ASCII character, looked up
	// without the set's ranges and categories.
	ascii [utf8.RuneSelf]bool
	set   syntax.CharSet
}

// newFirstChars returns the first-character set of pattern, compiled into
// re with options, or nil when the rule must always be run.
func newFirstChars(pattern string, options regexp2.RegexOptions, re *regexp2.Regexp) *firstChars {
	tree, err := syntax.Parse(pattern, syntax.RegexOptions(options))
	if err != nil {
		return nil
	}
	code, err := syntax.Write(tree)
	if err != nil || code.FcPrefix == nil || code.FcPrefix.CaseInsensitive || code.RightToLeft {
		return nil
	}
	f := &firstChars{re: re, set: code.FcPrefix.PrefixSet}
	for c := rune(0); c < utf8.RuneSelf; c++ {
		f.ascii[c] = f.set.CharIn(c)
	}
	return f
}

// MayMatchAt reports whether the rule's expression can match text at pos:
// false only when it certainly cannot, because no match can begin with
// text[pos] (or pos is past the end, where a rule with a first-character
// set has nothing to match). A rule without such a set, or whose Regexp
// was replaced after compilation, may always match. kz fork.
func (r *CompiledRule) MayMatchAt(text []rune, pos int) bool {
	f := r.first
	if f == nil || f.re != r.Regexp {
		return true
	}
	if pos < 0 || pos >= len(text) {
		return false
	}
	c := text[pos]
	if c >= 0 && c < utf8.RuneSelf {
		return f.ascii[c]
	}
	return f.set.CharIn(c)
}

// CompiledRules returns the lexer's rules compiled, as matchRules runs
// them. kz fork: it lets tests check each rule's first-character set
// against its expression.
func (r *RegexLexer) CompiledRules() (CompiledRules, error) {
	if err := r.needRules(); err != nil {
		return nil, err
	}
	return r.rules, nil
}
