package patch

import (
	"strings"
	"unicode"
)

// locateElided handles a search text that skips lines with "..." or
// "// ... existing code ..." markers. The text is split at the markers into
// pieces that must match in order; the replacement must have the same
// markers, and each piece's replacement replaces that piece while the
// skipped lines stay as they are. Each later piece is taken at its first
// occurrence after the previous one, and the whole chain is accepted only
// when exactly one starting place completes it.
func locateElided(lines, search, replace []string, hint int, e Edit) (location, *Problem) {
	sp, rp := splitPieces(search), splitPieces(replace)
	if len(sp) != len(rp) {
		return location{}, &Problem{Kind: RefusedPlaceholder, Message: "the search lines skip code with \"...\" markers but the replacement does not keep the same markers; write the complete lines or mirror the markers"}
	}
	if len(sp[0]) == 0 && len(rp[0]) > 0 || len(sp[len(sp)-1]) == 0 && len(rp[len(rp)-1]) > 0 {
		return location{}, &Problem{Kind: RefusedPlaceholder, Message: "the replacement adds lines next to a \"...\" marker at the edge of the search lines, so their place is unknown"}
	}
	type piece struct{ s, r []string }
	var pieces []piece
	for i := range sp {
		if len(sp[i]) == 0 {
			if len(rp[i]) > 0 {
				return location{}, &Problem{Kind: RefusedPlaceholder, Message: "two \"...\" markers in a row with replacement lines between them"}
			}
			continue
		}
		if p := placeholderProblem(sp[i], rp[i]); p != nil {
			return location{}, p
		}
		pieces = append(pieces, piece{sp[i], rp[i]})
	}
	if len(pieces) == 0 {
		return location{}, &Problem{Kind: RefusedNoMatch, Message: "the search lines contain only \"...\" markers"}
	}
	match := func(at int, s []string) bool {
		if at+len(s) > len(lines) {
			return false
		}
		for k := range s {
			if !eqRTrim(lines[at+k], s[k]) {
				return false
			}
		}
		return true
	}
	var chains [][]int
	for p0 := 0; p0+len(pieces[0].s) <= len(lines); p0++ {
		if !match(p0, pieces[0].s) {
			continue
		}
		chain := []int{p0}
		pos := p0 + len(pieces[0].s)
		for _, pc := range pieces[1:] {
			found := -1
			for q := pos; q+len(pc.s) <= len(lines); q++ {
				if match(q, pc.s) {
					found = q
					break
				}
			}
			if found < 0 {
				chain = nil
				break
			}
			chain = append(chain, found)
			pos = found + len(pc.s)
		}
		if chain != nil {
			chains = append(chains, chain)
		}
	}
	if len(chains) == 0 {
		return location{}, &Problem{Kind: RefusedNoMatch, Message: "the pieces between the \"...\" markers were not found in order", Nearest: nearestLines(lines, pieces[0].s)}
	}
	if len(chains) > 1 {
		var cands []location
		for _, c := range chains {
			cands = append(cands, location{start: c[0]})
		}
		// Hints may still break the tie, under the same rule as whole blocks.
		if loc, ok := choose(lines, cands, hint, Edit{LineHint: e.LineHint}, 0); ok {
			for _, c := range chains {
				if c[0] == loc.start {
					chains = [][]int{c}
					break
				}
			}
		} else {
			return location{}, ambiguous(lines, cands, len(pieces[0].s))
		}
	}
	chain := chains[0]
	var repl []string
	var from []int
	for i, pc := range pieces {
		r, f, ok := buildReplacement(pc.s, pc.r, chain[i], lines, func(s string) (string, bool) { return s, true })
		if !ok {
			return location{}, &Problem{Kind: RefusedNoMatch, Message: "could not build the replacement"}
		}
		repl = append(repl, r...)
		from = append(from, f...)
		if i+1 < len(pieces) {
			gapStart, gapEnd := chain[i]+len(pc.s), chain[i+1]
			repl = append(repl, lines[gapStart:gapEnd]...)
			from = append(from, seq(gapStart, gapEnd-gapStart)...)
		}
	}
	last := len(pieces) - 1
	end := chain[last] + len(pieces[last].s)
	return location{start: chain[0], n: end - chain[0], repl: repl, from: from, step: StepElision}, nil
}

// splitPieces splits lines at placeholder lines.
func splitPieces(lines []string) [][]string {
	out := [][]string{nil}
	for _, l := range lines {
		if placeholderLine(l) {
			out = append(out, nil)
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], l)
	}
	return out
}

// NumberedLine is a file line with its 1-based number, for feedback.
type NumberedLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

func numbered(lines []string, from, to int) []NumberedLine {
	from, to = max(from, 0), min(to, len(lines))
	out := make([]NumberedLine, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, NumberedLine{Line: i + 1, Text: lines[i]})
	}
	return out
}

// nearestLines finds the window of the file most like the search text:
// lines shared whole (compared without surrounding whitespace) count most,
// then shared words, so a search whose every line was misremembered still
// points at the right place. It only feeds the message to the model;
// nothing is ever applied from it.
func nearestLines(lines, search []string) []NumberedLine {
	if len(lines) == 0 {
		return nil
	}
	want := map[string]bool{}
	words := map[string]bool{}
	for _, s := range search {
		if t := strings.TrimSpace(s); len(t) > 1 {
			want[t] = true
		}
		for _, w := range strings.FieldsFunc(s, notWordRune) {
			if len(w) > 1 {
				words[w] = true
			}
		}
	}
	if len(want) == 0 && len(words) == 0 {
		return nil
	}
	const wholeLine = 1000 // outweighs the words of any line
	score := make([]int, len(lines))
	for i, l := range lines {
		if want[strings.TrimSpace(l)] {
			score[i] = wholeLine
		}
		for _, w := range strings.FieldsFunc(l, notWordRune) {
			if words[w] {
				score[i]++
			}
		}
	}
	at := bestWindow(score, len(search))
	if at < 0 {
		return nil
	}
	return numbered(lines, at, at+min(max(len(search), 1), 12))
}

// bestWindow returns the start of the window of n lines with the highest
// total score, preferring among equal totals one that starts on a scoring
// line; -1 when every score is zero.
func bestWindow(score []int, n int) int {
	sum := make([]int, len(score)+1)
	for i, s := range score {
		sum[i+1] = sum[i] + s
	}
	w := min(max(n, 1), len(score))
	best, bestAt := 0, -1
	for i := 0; i+w <= len(score); i++ {
		c := sum[i+w] - sum[i]
		if c > best || (c == best && c > 0 && score[bestAt] == 0 && score[i] > 0) {
			best, bestAt = c, i
		}
	}
	return bestAt
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
}
