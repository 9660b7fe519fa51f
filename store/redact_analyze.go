package store

import (
	"fmt"
	"hash/fnv"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// rulePlan is what analyzing a rule's expression tells about where its
// matches can be, so that it runs only around its keywords. Parsing two
// hundred expressions costs about a tenth of a second, too much for the
// first write of every kz process, so the plans are computed ahead and
// kept in redact_plans.go (go test ./store -run TestRedactPlans
// -update-redact-plans rewrites it); a rule whose expression changed
// since is analyzed when the rules load.
type rulePlan struct {
	// sum identifies the expression the plan was made for.
	sum uint64
	// heads, one per top-level alternative of the expression, say where
	// a match can be around a keyword (see headPlan). A rule without
	// heads runs over the whole text when one of its keywords occurs.
	heads []headPlan
	// gated says a match need not contain a keyword: the rule runs, on
	// windows around its heads' literals, only when a keyword occurs
	// somewhere in the text, as in gitleaks.
	gated bool
}

// headPlan is one top-level alternative seen from its first literal
// element: a match holds one of lits where a keyword starts, at most
// before bytes after the match's start and at most after bytes before
// its end. When the literals are the element's whole text (exact), tail
// is the rest of the alternative, which must match right after it.
// Checking lits, the word boundary and tail at a keyword costs a few
// hundred nanoseconds; only when they pass does the whole expression
// run, on a window of before+after bytes around the keyword.
type headPlan struct {
	lits     []headLit
	before   int
	after    int
	boundary bool
	tail     string
	// A tail that starts with optional runs of a few kinds of bytes
	// ([ \t\w.-]{0,20}[\s'"]{0,3} in gitleaks' assignments) and then
	// needs one of a few bytes (=, :, >) is checked first by hand:
	// within skipMax bytes (-1: any number) of the bytes in skip, one of
	// first must come. Go's regexp takes microseconds to say no to such a
	// tail, too long for the thousands of "key"s of a long text.
	skip, first string
	skipMax     int
}

type headLit struct {
	s    string
	fold bool
}

func exprSum(expr string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(expr))
	return h.Sum64()
}

// analyze plans a rule: for each top-level alternative of its
// expression, the first run of elements that is a small set of literals
// each starting with one of the rule's keywords. When some alternative
// has none, the rule is gated and its heads are any literals of three
// bytes or more; when one has none at all, the rule has no heads.
func analyze(expr string, keywords []string) (rulePlan, error) {
	plan := rulePlan{sum: exprSum(expr)}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return plan, fmt.Errorf("parse: %w", err)
	}
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub
	}
	var plans []rulePlan
	for _, gated := range []bool{false, true} {
		p := rulePlan{sum: plan.sum, gated: gated}
		for _, b := range branches {
			h, found := headOf(b, keywords, gated)
			if !found {
				p.heads = nil
				break
			}
			p.heads = append(p.heads, h)
		}
		if p.heads != nil {
			plans = append(plans, p)
		}
	}
	// A plan whose heads can lie anywhere in a long match (gitleaks'
	// kubernetes-secret-yaml ends with its keyword) would run the rule
	// on most of a text that holds the keyword often; a gated plan whose
	// heads start the matches is cheaper.
	for _, p := range plans {
		if p.boundedBefore() {
			return p, nil
		}
	}
	if len(plans) > 0 {
		return plans[0], nil
	}
	return plan, nil
}

func (p rulePlan) boundedBefore() bool {
	for _, h := range p.heads {
		if h.before >= maxSpan {
			return false
		}
	}
	return true
}

func headOf(b *syntax.Regexp, keywords []string, gated bool) (headPlan, bool) {
	elems := flattenConcat(b)
	var h headPlan
	for i, e := range elems {
		// The longest run of elements from i that is a small literal set:
		// flattening splits a factored alternation (AKIA|ASIA is parsed
		// as A(?:KIA|SIA)) into elements that are heads only together.
		lits, exact := literals(e)
		j := i + 1
		for lits != nil && exact && j < len(elems) {
			more, ex := literals(&syntax.Regexp{Op: syntax.OpConcat, Sub: elems[i : j+1]})
			if more == nil {
				break
			}
			if !ex {
				// Only prefixes of the next element are known: worth
				// taking when the exact run is no head by itself (the
				// "A" of A(?:3T[A-Z0-9]|KIA|…) is not, "AKIA" is), though
				// it leaves no tail to check.
				if !headLits(lits, keywords, gated) && headLits(more, keywords, gated) {
					lits, exact, j = more, false, j+1
				}
				break
			}
			lits, j = more, j+1
		}
		if lits != nil && headLits(lits, keywords, gated) {
			h.lits = lits
			h.boundary = i > 0 && elems[i-1].Op == syntax.OpWordBoundary
			rest := &syntax.Regexp{Op: syntax.OpConcat, Sub: elems[j:]}
			if !exact {
				// Only a prefix of elems[j-1] is known: no tail to check.
				rest.Sub = elems[j-1:]
			} else if len(rest.Sub) > 0 {
				h.tail = rest.String()
				h.skip, h.first, h.skipMax = quickCheck(rest.Sub)
			}
			if n := maxLen(rest); n < 0 || n > maxSpan {
				h.after = maxSpan
			} else {
				h.after = n
			}
			return h, true
		}
		if n := maxLen(e); n < 0 || h.before+n > maxSpan {
			h.before = maxSpan
		} else {
			h.before += n
		}
	}
	return h, false
}

// headLits says whether lits can serve as a head: each starts with one of
// the keywords, or, for a gated rule, is long enough to be a keyword of
// its own.
func headLits(lits []headLit, keywords []string, gated bool) bool {
	for _, l := range lits {
		if gated {
			if len(l.s) < 3 {
				return false
			}
			continue
		}
		lower := strings.ToLower(l.s)
		ok := false
		for _, k := range keywords {
			if strings.HasPrefix(lower, k) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// flattenConcat lists the elements of a concatenation, looking through
// groups, so that a capture around most of an expression does not hide
// its literal prefix.
func flattenConcat(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return flattenConcat(re.Sub[0])
	case syntax.OpConcat:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			out = append(out, flattenConcat(s)...)
		}
		return out
	}
	return []*syntax.Regexp{re}
}

// maxLiterals bounds the set of strings a head may stand for.
const maxLiterals = 64

// literals is a small set of non-empty strings that every match of re
// starts with (exact: that are re's whole matches); nil when there is
// none.
func literals(re *syntax.Regexp) (lits []headLit, exact bool) {
	fold := re.Flags&syntax.FoldCase != 0
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return nil, false
		}
		return []headLit{{string(re.Rune), fold}}, true
	case syntax.OpCharClass:
		var out []headLit
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if len(out) == 8 {
					return nil, false
				}
				out = append(out, headLit{string(c), false})
			}
		}
		return out, true
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpEmptyMatch:
		return []headLit{{"", false}}, true
	case syntax.OpQuest:
		l, ex := literals(re.Sub[0])
		if l == nil || !ex || len(l) >= maxLiterals {
			return nil, false
		}
		return append(l, headLit{"", false}), true
	case syntax.OpAlternate:
		var out []headLit
		exact := true
		for _, s := range re.Sub {
			l, ex := literals(s)
			if l == nil || len(out)+len(l) > maxLiterals {
				return nil, false
			}
			out, exact = append(out, l...), exact && ex
		}
		return out, exact
	case syntax.OpConcat:
		out := []headLit{{"", false}}
		for _, s := range re.Sub {
			l, ex := literals(s)
			if l == nil || len(out)*len(l) > maxLiterals {
				return prefixes(out)
			}
			var next []headLit
			for _, a := range out {
				for _, b := range l {
					next = append(next, headLit{a.s + b.s, a.fold || b.fold})
				}
			}
			out = next
			if !ex {
				return prefixes(out)
			}
		}
		return out, true
	}
	return nil, false
}

// prefixes is out as a set of prefixes, or nil when one is empty and so
// says nothing.
func prefixes(out []headLit) ([]headLit, bool) {
	for _, l := range out {
		if l.s == "" {
			return nil, false
		}
	}
	return out, false
}

// maxLen is the most bytes re can match, -1 when unbounded.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, c := range re.Rune {
			n += runeLen(c, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], unicode.MaxRune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		n := maxLen(re.Sub[0])
		if re.Max < 0 || n < 0 {
			return -1
		}
		return n * re.Max
	case syntax.OpConcat:
		t := 0
		for _, s := range re.Sub {
			n := maxLen(s)
			if n < 0 {
				return -1
			}
			t += n
		}
		return t
	case syntax.OpAlternate:
		t := 0
		for _, s := range re.Sub {
			n := maxLen(s)
			if n < 0 {
				return -1
			}
			t = max(t, n)
		}
		return t
	}
	return 0
}

// runeLen is the most bytes c matches: with case folding, the longest of
// its other cases (k also matches the three-byte Kelvin sign).
func runeLen(c rune, fold bool) int {
	n := utf8.RuneLen(c)
	if fold {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			n = max(n, utf8.RuneLen(f))
		}
	}
	return max(n, 1)
}

// quickCheck finds, for a tail, the bytes that may be skipped at its
// start (and how many, -1 for any number) and the bytes of which one must
// then come; first is "" when there is no such check.
func quickCheck(elems []*syntax.Regexp) (skip, first string, skipMax int) {
	var skipSet [256]bool
	i := 0
	for ; i < len(elems); i++ {
		e := elems[i]
		for e.Op == syntax.OpCapture {
			e = e.Sub[0]
		}
		n := 0
		switch e.Op {
		case syntax.OpStar, syntax.OpPlus:
			n = -1
		case syntax.OpQuest:
			n = 1
		case syntax.OpRepeat:
			n = e.Max
		default:
			n = -2
		}
		if n == -2 || !byteSet(e.Sub[0], &skipSet) {
			break
		}
		if n < 0 || skipMax < 0 {
			skipMax = -1
		} else {
			skipMax += n
		}
	}
	var firstSet [256]bool
	if i == len(elems) || minLen(elems[i]) == 0 || !firstBytes(elems[i], &firstSet) {
		return "", "", 0
	}
	return setString(&skipSet), setString(&firstSet), skipMax
}

// byteSet adds to set the bytes that start the one-character matches of
// re (a class or a single character); for a character beyond ASCII, all
// bytes from 0x80, to stay on the safe side.
func byteSet(re *syntax.Regexp, set *[256]bool) bool {
	switch re.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1] && c < utf8.RuneSelf; c++ {
				set[c] = true
			}
			if re.Rune[i+1] >= utf8.RuneSelf {
				for b := utf8.RuneSelf; b < 256; b++ {
					set[b] = true
				}
			}
		}
		return true
	case syntax.OpLiteral:
		if len(re.Rune) != 1 {
			return false
		}
		c := re.Rune[0]
		for {
			if c < utf8.RuneSelf {
				set[c] = true
			} else {
				for b := utf8.RuneSelf; b < 256; b++ {
					set[b] = true
				}
			}
			if re.Flags&syntax.FoldCase == 0 {
				return true
			}
			if c = unicode.SimpleFold(c); c == re.Rune[0] {
				return true
			}
		}
	}
	return false
}

// firstBytes adds to set every byte a match of re can start with; false
// when that is not known.
func firstBytes(re *syntax.Regexp, set *[256]bool) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return false
		}
		return byteSet(&syntax.Regexp{Op: syntax.OpLiteral, Rune: re.Rune[:1], Flags: re.Flags}, set)
	case syntax.OpCharClass:
		return byteSet(re, set)
	case syntax.OpCapture, syntax.OpPlus:
		return firstBytes(re.Sub[0], set)
	case syntax.OpRepeat:
		return re.Min > 0 && firstBytes(re.Sub[0], set)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if minLen(s) == 0 || !firstBytes(s, set) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		return len(re.Sub) > 0 && minLen(re.Sub[0]) > 0 && firstBytes(re.Sub[0], set)
	}
	return false
}

// minLen is the fewest bytes re can match.
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(string(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		t := 0
		for _, s := range re.Sub {
			t += minLen(s)
		}
		return t
	case syntax.OpAlternate:
		t := -1
		for _, s := range re.Sub {
			if n := minLen(s); t < 0 || n < t {
				t = n
			}
		}
		return max(t, 0)
	}
	return 0
}

func setString(set *[256]bool) string {
	var b []byte
	for c, in := range set {
		if in {
			b = append(b, byte(c))
		}
	}
	return string(b)
}
