package patch

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Step names the rung of the matching ladder that located an edit.
type Step string

// The ladder, in the order it is tried. Every rung accepts a location only
// when it is the single place the search text matches; line hints and
// envelope anchors only choose between several equally good places.
const (
	StepExact              Step = "exact"
	StepTrailingWhitespace Step = "trailing_whitespace"
	StepIndentation        Step = "indentation"
	StepUnicode            Step = "unicode_punctuation"
	StepBlankEdges         Step = "blank_edges"
	StepElision            Step = "elision"
	StepAlreadyApplied     Step = "already_applied"
	StepAppend             Step = "append"
	StepWholeFile          Step = "whole_file"
)

// EditResult says how one edit was applied.
type EditResult struct {
	Index int  `json:"index"`
	Step  Step `json:"step"`
	// Line is the 1-based line where the edit landed, in the file as it was
	// when the edit was applied (after the file's earlier edits).
	Line int  `json:"line"`
	NoOp bool `json:"no_op,omitempty"`
}

// location is a located edit: lines[start:start+n] become repl, and from
// maps each replacement line to the original line it keeps (its exact text
// and terminator), or -1 for a new line.
type location struct {
	start, n int
	repl     []string
	from     []int
	step     Step
}

// lineEq compares a file line with a search line.
type lineEq func(file, search string) bool

func eqExact(f, s string) bool { return f == s }
func eqRTrim(f, s string) bool { return rtrim(f) == rtrim(s) }
func eqUnicode(f, s string) bool {
	return normalizePunct(rtrim(f)) == normalizePunct(rtrim(s))
}

func rtrim(s string) string { return strings.TrimRight(s, " \t\r") }

var punct = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'",
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`, "\u2033", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00a0", " ", "\u2007", " ", "\u2009", " ", "\u200a", " ", "\u202f", " ",
	"\u2026", "...", "\u200b", "", "\ufeff", "",
)

func normalizePunct(s string) string { return punct.Replace(s) }

// plainPunct reports whether no line holds a mark normalizePunct changes.
func plainPunct(lines []string) bool {
	for _, l := range lines {
		if normalizePunct(l) != l {
			return false
		}
	}
	return true
}

// locateEdit runs the ladder for one edit against lines. hint is the
// 0-based line the model's hint points at (or -1).
func locateEdit(lines []string, e Edit, hint int) (location, *Problem) {
	search, replace := splitText(e.Search), splitText(e.Replace)
	if len(search) == 0 {
		if e.AtEOF || len(lines) == 0 {
			if p := placeholderProblem(nil, replace); p != nil {
				return location{}, p
			}
			return location{start: len(lines), repl: replace, from: newFrom(len(replace)), step: StepAppend}, nil
		}
		return location{}, &Problem{Kind: RefusedNoMatch, Message: "the edit has no search or context lines, so it has no place in the file; include the lines it goes next to"}
	}
	if p := placeholderProblem(search, replace); p != nil {
		return location{}, p
	}
	variants := []struct {
		search, replace []string
		trimmed         bool
	}{{search, replace, false}}
	if ts, tr, ok := trimBlankEdges(search, replace); ok {
		variants = append(variants, struct {
			search, replace []string
			trimmed         bool
		}{ts, tr, true})
	}
	for _, v := range variants {
		for _, step := range []Step{StepExact, StepTrailingWhitespace, StepIndentation, StepUnicode} {
			cands := findCandidates(lines, v.search, v.replace, step)
			if len(cands) == 0 {
				continue
			}
			loc, ok := choose(lines, cands, hint, e, len(v.search))
			if !ok {
				return location{}, ambiguous(lines, cands, len(v.search))
			}
			if v.trimmed {
				loc.step = StepBlankEdges
			}
			return loc, nil
		}
	}
	// The markers were not literal file lines: try them as elisions.
	if hasPlaceholder(search) {
		return locateElided(lines, search, replace, hint, e)
	}
	// Search absent: the edit may already be in the file.
	// Only a distinctive replacement counts: a short one ("}") found once
	// proves nothing about this edit.
	if substantial(replace) && !equalLines(search, replace) {
		if cands := findCandidates(lines, replace, replace, StepTrailingWhitespace); len(cands) == 1 {
			c := cands[0]
			return location{start: c.start, n: c.n, repl: lines[c.start : c.start+c.n], from: seq(c.start, c.n), step: StepAlreadyApplied}, nil
		}
	}
	return location{}, &Problem{Kind: RefusedNoMatch, Message: "the search lines were not found in the file", Nearest: nearestLines(lines, search)}
}

// findCandidates returns every location where search matches under step,
// with the replacement already built for that location. A location whose
// replacement cannot be built (an indentation that cannot be undone) is
// not a candidate.
func findCandidates(lines, search, replace []string, step Step) []location {
	var out []location
	n := len(search)
	if n == 0 || n > len(lines) {
		return nil
	}
	var eq lineEq
	switch step {
	case StepExact:
		eq = eqExact
	case StepTrailingWhitespace:
		eq = eqRTrim
	case StepUnicode:
		eq = eqUnicode
	case StepIndentation:
		return findIndented(lines, search, replace)
	}
	first := search[0]
	work := 0
	for i := 0; i+n <= len(lines); i++ {
		if !eq(lines[i], first) {
			continue
		}
		ok := true
		for k := 1; k < n; k++ {
			if !eq(lines[i+k], search[k]) {
				ok = false
				break
			}
		}
		if work += n; work > matchBudget {
			// Pathological input (thousands of identical lines): report
			// every place so far, which the caller refuses as ambiguous
			// when there are several.
			return append(out, location{start: i, n: n, step: step})
		}
		if !ok {
			continue
		}
		transform := func(s string) (string, bool) { return s, true }
		if step == StepUnicode && plainPunct(lines[i:i+n]) {
			// The file writes plain ASCII punctuation where the model
			// wrote typographic marks: the model's new lines are
			// normalised the same way. A file that itself uses
			// typographic marks gets the new lines as written.
			transform = func(s string) (string, bool) { return normalizePunct(s), true }
		}
		repl, from, ok := buildReplacement(search, replace, i, lines, transform)
		if ok {
			out = append(out, location{start: i, n: n, repl: repl, from: from, step: step})
		}
	}
	return out
}

// findIndented finds places where search matches with one uniform
// indentation difference on every non-blank line, and re-indents the
// replacement by the same difference.
func findIndented(lines, search, replace []string) []location {
	var out []location
	n := len(search)
	work := 0
	for i := 0; i+n <= len(lines); i++ {
		if work += n; work > matchBudget {
			return append(out, location{start: i, n: n, step: StepIndentation}, location{start: i + 1, n: n, step: StepIndentation})
		}
		if strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(search[0]) != "" && strings.TrimSpace(lines[i]) != strings.TrimSpace(search[0]) {
			continue
		}
		add, delta, ok := indentDelta(lines[i:i+n], search)
		if !ok || delta == "" {
			continue
		}
		transform := func(s string) (string, bool) {
			if strings.TrimSpace(s) == "" {
				return s, true
			}
			if add {
				return delta + s, true
			}
			if !strings.HasPrefix(s, delta) {
				return "", false
			}
			return s[len(delta):], true
		}
		repl, from, ok := buildReplacement(search, replace, i, lines, transform)
		if ok {
			out = append(out, location{start: i, n: n, repl: repl, from: from, step: StepIndentation})
		}
	}
	return out
}

// indentDelta reports whether file lines equal search lines up to one
// indentation string added to (add) or removed from every non-blank line.
func indentDelta(file, search []string) (add bool, delta string, ok bool) {
	set := false
	for k := range search {
		f, s := rtrim(file[k]), rtrim(search[k])
		fr, sr := strings.TrimLeft(f, " \t"), strings.TrimLeft(s, " \t")
		if fr != sr {
			return false, "", false
		}
		if fr == "" {
			continue
		}
		fw, sw := f[:len(f)-len(fr)], s[:len(s)-len(sr)]
		var a bool
		var d string
		switch {
		case len(fw) >= len(sw) && strings.HasSuffix(fw, sw):
			a, d = true, fw[:len(fw)-len(sw)]
		case strings.HasSuffix(sw, fw):
			a, d = false, sw[:len(sw)-len(fw)]
		default:
			return false, "", false
		}
		if !set {
			add, delta, set = a, d, true
		} else if a != add || d != delta {
			return false, "", false
		}
	}
	return add, delta, set
}

// buildReplacement maps replacement lines that repeat search lines (context
// the model copied) onto the matched file lines, so the file keeps their
// exact bytes; other lines go through transform.
func buildReplacement(search, replace []string, start int, lines []string, transform func(string) (string, bool)) ([]string, []int, bool) {
	repl := make([]string, len(replace))
	from := make([]int, len(replace))
	for k := range from {
		from[k] = -1
	}
	p := 0
	for p < len(search) && p < len(replace) && search[p] == replace[p] {
		from[p] = start + p
		p++
	}
	s := 0
	for s < len(search)-p && s < len(replace)-p && search[len(search)-1-s] == replace[len(replace)-1-s] {
		from[len(replace)-1-s] = start + len(search) - 1 - s
		s++
	}
	// Middle: map in order, greedily, lines identical to a remaining search line.
	si := p
	for r := p; r < len(replace)-s; r++ {
		for k := si; k < len(search)-s; k++ {
			if search[k] == replace[r] && strings.TrimSpace(replace[r]) != "" {
				from[r] = start + k
				si = k + 1
				break
			}
		}
	}
	for k, line := range replace {
		if from[k] >= 0 {
			repl[k] = lines[from[k]]
			continue
		}
		t, ok := transform(line)
		if !ok {
			return nil, nil, false
		}
		repl[k] = t
	}
	return repl, from, true
}

// choose picks one candidate: the only one; else the one after the
// envelope anchor; else the one at the end of the file for an AtEOF hunk;
// else the one the line hint clearly points at. Otherwise it fails.
func choose(lines []string, cands []location, hint int, e Edit, n int) (location, bool) {
	if len(cands) == 1 {
		return cands[0], true
	}
	if e.Anchor != "" {
		if c, ok := afterAnchor(lines, cands, e.Anchor); ok {
			return c, true
		}
	}
	if e.AtEOF {
		var atEnd []location
		for _, c := range cands {
			if c.start+c.n == len(lines) {
				atEnd = append(atEnd, c)
			}
		}
		if len(atEnd) == 1 {
			return atEnd[0], true
		}
	}
	if hint < 0 {
		return location{}, false
	}
	// The hint must point clearly at one candidate: within a few lines of
	// it, and much closer to it than to any other.
	best, d1, d2 := -1, int(^uint(0)>>1), int(^uint(0)>>1)
	for i, c := range cands {
		d := abs(c.start - hint)
		switch {
		case d < d1:
			best, d1, d2 = i, d, d1
		case d < d2:
			d2 = d
		}
	}
	if d1 <= hintWindow && d2 >= 2*d1+hintWindow {
		return cands[best], true
	}
	return location{}, false
}

// matchBudget bounds the line comparisons of one ladder step, so an
// adversarial file or edit (thousands of identical lines) cannot stall
// validation.
const matchBudget = 20_000_000

// hintWindow is how far (in lines) a tie-breaking line hint may be from the
// candidate it picks.
const hintWindow = 5

func afterAnchor(lines []string, cands []location, anchor string) (location, bool) {
	a := strings.TrimSpace(anchor)
	var picked []location
	seen := map[int]bool{}
	for i, l := range lines {
		if strings.TrimSpace(l) != a {
			continue
		}
		for _, c := range cands {
			if c.start > i {
				if !seen[c.start] {
					seen[c.start] = true
					picked = append(picked, c)
				}
				break
			}
		}
	}
	if len(picked) == 1 {
		return picked[0], true
	}
	return location{}, false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func ambiguous(lines []string, cands []location, n int) *Problem {
	var at []string
	for i, c := range cands {
		if i == 5 {
			at = append(at, "…")
			break
		}
		at = append(at, fmt.Sprint(c.start+1))
	}
	var near []NumberedLine
	for _, c := range cands[:min(2, len(cands))] {
		near = append(near, numbered(lines, c.start, c.start+min(n, 6))...)
	}
	return &Problem{Kind: RefusedAmbiguous, Message: fmt.Sprintf("the search lines match %d places (lines %s); add surrounding lines so they match exactly one", len(cands), strings.Join(at, ", ")), Nearest: near}
}

// trimBlankEdges drops blank lines at the start and end of search, and the
// same blank lines from replace when it has them.
func trimBlankEdges(search, replace []string) ([]string, []string, bool) {
	lead, trail := 0, 0
	for lead < len(search) && strings.TrimSpace(search[lead]) == "" {
		lead++
	}
	for trail < len(search)-lead && strings.TrimSpace(search[len(search)-1-trail]) == "" {
		trail++
	}
	if (lead == 0 && trail == 0) || lead == len(search) {
		return nil, nil, false
	}
	r := replace
	for k := 0; k < lead && len(r) > 0 && strings.TrimSpace(r[0]) == ""; k++ {
		r = r[1:]
	}
	for k := 0; k < trail && len(r) > 0 && strings.TrimSpace(r[len(r)-1]) == ""; k++ {
		r = r[:len(r)-1]
	}
	return search[lead : len(search)-trail], r, true
}

// Placeholders: lines models write instead of code. A whole-line "...",
// or a comment whose entire text says code was left out ("... existing
// code ...", "rest of file unchanged"). A comment that merely contains such
// a word ("unchanged. In particular, …") is not one.
var placeholderPhrase = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(` +
		`(the )?rest of (the )?(file|code|function|class|method|module|implementation|body|lines?|imports)( (is |remains |stays )?(unchanged|the same|as before|as is))?` +
		`|(keep )?(the )?(remaining|existing|other|previous|original|same|unchanged) (code|lines|content|implementation|methods|functions|imports|fields|tests)( (here|below|above|unchanged|as before|stays the same|remains the same|goes here))?` +
		`|(code|everything else|rest|other methods) (is |remains |stays )?(unchanged|the same)` +
		`|unchanged( code| lines)?|omitted( for brevity)?|(code )?omitted|etc\.?|snip|\[snip\]` +
		`)$`)
})

func placeholderLine(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" {
		return false
	}
	commented := false
	for _, pre := range []string{"//", "#", "/*", "<!--", "--", ";", "*"} {
		if strings.HasPrefix(t, pre) {
			t, commented = strings.TrimSpace(strings.TrimPrefix(t, pre)), true
			break
		}
	}
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(t, "*/"), "-->"))
	if t == "..." || t == "…" || t == "[...]" {
		return true
	}
	dots := strings.HasPrefix(t, "...") || strings.HasPrefix(t, "…")
	if !commented && !dots {
		return false
	}
	core := strings.ToLower(strings.Trim(t, ".…()[] \t:"))
	return placeholderPhrase().MatchString(core)
}

func hasPlaceholder(lines []string) bool {
	for _, l := range lines {
		if placeholderLine(l) {
			return true
		}
	}
	return false
}

// placeholderProblem refuses replacement lines that are placeholders and do
// not already appear in the search text (a placeholder the file really
// contains is just context).
func placeholderProblem(search, replace []string) *Problem {
	in := map[string]bool{}
	for _, s := range search {
		in[s] = true
	}
	for _, r := range replace {
		if placeholderLine(r) && !in[r] {
			return &Problem{Kind: RefusedPlaceholder, Message: fmt.Sprintf("the replacement contains the placeholder %q instead of real lines; write the complete lines", strings.TrimSpace(r))}
		}
	}
	return nil
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func seq(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

func newFrom(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

// substantial reports whether lines carry enough text (12 non-space bytes)
// to be recognised as an edit that is already present.
func substantial(lines []string) bool {
	n := 0
	for _, l := range lines {
		n += len(strings.TrimSpace(l))
	}
	return n >= 12
}
