package store

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces a secret in persisted text.
const Redacted = "[REDACTED]"

// Redact replaces secrets in s with [REDACTED]. It is applied to every
// string kz persists, once, in the store's write funnel.
//
// The secrets are those of gitleaks' rule set (some two hundred kinds of
// vendor keys and tokens, generic assignments of high-entropy values;
// see gitleaksRuleSet) and of kz's own rules (see kzRules): credentials on
// command lines, passwords in configuration files, Authorization headers,
// passwords in URLs and private key blocks of every kind, whole. Only the
// secret is replaced; the name it was assigned to, the scheme of an
// Authorization header, the user of a URL stay for the reader.
//
// It runs in time linear in len(s): one pass of a keyword automaton finds
// where a secret can be, and each rule runs only on a bounded window
// around its own keywords (see redactor.redact). Text without any keyword,
// most text, costs that one pass and no allocation.
func Redact(s string) string {
	rd := theRedactor()
	if !rd.words.any(s) {
		return s
	}
	return rd.redact(s)
}

// redactor is the compiled rule set.
type redactor struct {
	rules  []*secretRule
	global *allowlist
	words  *keywordSet
	// uses says, for each word of the automaton, which rules it starts a
	// head of (head) or only lets run (a gate).
	uses [][]wordUse
}

type wordUse struct {
	rule int32
	head bool
}

// theRedactor is built on first use, not at package init, which every kz
// process would pay for, `kz version` included. The rules are part of the
// binary, so failing to build them is a defect of the build itself, which
// TestRedactRulesLoad catches.
var theRedactor = sync.OnceValue(func() *redactor {
	rd, err := newRedactor()
	if err != nil {
		panic(err)
	}
	return rd
})

func newRedactor() (*redactor, error) {
	rules, global, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	own, err := kzRules()
	if err != nil {
		return nil, err
	}
	rd := &redactor{rules: append(rules, own...), global: global}
	index := map[string]int{}
	var words []string
	use := func(w string, u wordUse) {
		w = strings.ToLower(w)
		i, ok := index[w]
		if !ok {
			i = len(words)
			index[w] = i
			words = append(words, w)
			rd.uses = append(rd.uses, nil)
		}
		if !slices.Contains(rd.uses[i], u) {
			rd.uses[i] = append(rd.uses[i], u)
		}
	}
	for i, r := range rd.rules {
		if len(r.keywords) == 0 {
			return nil, fmt.Errorf("rule %s has no keywords: every rule must have some, or redaction would not be linear", r.id)
		}
		head := !r.plan.gated && (r.plan.heads != nil || r.scan != nil)
		for _, k := range r.keywords {
			use(k, wordUse{int32(i), head})
		}
		if r.plan.gated {
			for _, h := range r.plan.heads {
				for _, l := range h.lits {
					use(l.s, wordUse{int32(i), true})
				}
			}
		}
	}
	rd.words = newKeywordSet(words)
	return rd, nil
}

// span is a part of the view to replace.
type span struct{ start, end int }

// redactScratch is what one call needs, kept for the next.
type redactScratch struct {
	starts  [][]int
	gate    []bool
	touched []int32
	windows []span
	spans   []span
}

var scratchPool = sync.Pool{New: func() any { return new(redactScratch) }}

// redact finds the secrets of s and replaces them.
func (rd *redactor) redact(s string) string {
	tv := newTextView(s)
	sc := scratchPool.Get().(*redactScratch)
	defer scratchPool.Put(sc)
	rd.find(tv.text, -1, sc)
	if len(sc.spans) == 0 {
		return s
	}
	return replaceSpans(tv, sc.spans)
}

// find puts in sc.spans the secrets of the view v that rule only finds,
// or all rules when only is -1.
func (rd *redactor) find(v string, only int32, sc *redactScratch) {
	if len(sc.starts) < len(rd.rules) {
		sc.starts = make([][]int, len(rd.rules))
		sc.gate = make([]bool, len(rd.rules))
	}
	sc.touched, sc.spans = sc.touched[:0], sc.spans[:0]
	rd.words.scan(v, func(w, end int) {
		start := end - len(rd.words.words[w])
		for _, u := range rd.uses[w] {
			if only >= 0 && u.rule != only {
				continue
			}
			if !sc.gate[u.rule] && len(sc.starts[u.rule]) == 0 {
				sc.touched = append(sc.touched, u.rule)
			}
			if u.head {
				sc.starts[u.rule] = append(sc.starts[u.rule], start)
			} else {
				sc.gate[u.rule] = true
			}
		}
	})
	slices.Sort(sc.touched)
	add := func(a, b int) {
		if b > a {
			sc.spans = append(sc.spans, span{a, b})
		}
	}
	for _, i := range sc.touched {
		r := rd.rules[i]
		starts := sc.starts[i]
		switch {
		case r.scan != nil:
			if len(starts) > 0 {
				r.scan(v, starts, add)
			}
		case r.compile() != nil:
		case r.plan.heads == nil:
			if sc.gate[i] || len(starts) > 0 {
				rd.match(r, v, 0, len(v), add)
			}
		case !r.plan.gated || sc.gate[i]:
			rd.runWindows(r, v, starts, sc, add)
		}
		sc.starts[i], sc.gate[i] = starts[:0], false
	}
}

// runWindows runs r around each of its heads that passes the cheap
// checks, on merged windows, so that no byte is scanned twice by one
// rule.
func (rd *redactor) runWindows(r *secretRule, v string, starts []int, sc *redactScratch, add func(int, int)) {
	sc.windows = sc.windows[:0]
	for _, p := range starts {
		for hi := range r.plan.heads {
			h := &r.plan.heads[hi]
			for _, l := range h.lits {
				if !l.matchAt(v, p) {
					continue
				}
				if h.boundary && (p > 0 && isWordByte(v[p-1])) == isWordByte(v[p]) {
					continue
				}
				e := p + len(l.s)
				if !r.checks[hi].pass(v, e) {
					continue
				}
				end := min(len(v), e+h.after+1)
				if t := r.tails[hi]; t != nil {
					// A match through this head ends where the tail's
					// preferred match ends: the tail is the last part of
					// its alternative, so leftmost-first picks the same
					// continuation. The window need reach no further,
					// which keeps windows from merging over a whole text
					// whose every line holds a keyword.
					loc := t.FindStringIndex(v[e-1 : end])
					if loc == nil {
						continue
					}
					end = min(len(v), e-1+loc[1]+1)
				}
				sc.windows = append(sc.windows, span{max(0, p-h.before-1), end})
			}
		}
	}
	if len(sc.windows) == 0 {
		return
	}
	slices.SortFunc(sc.windows, func(a, b span) int { return a.start - b.start })
	cur := sc.windows[0]
	for _, w := range sc.windows[1:] {
		if w.start <= cur.end {
			cur.end = max(cur.end, w.end)
			continue
		}
		rd.match(r, v, cur.start, cur.end, add)
		cur = w
	}
	rd.match(r, v, cur.start, cur.end, add)
}

// match runs r's expression on v[ws:we], widened to whole lines where
// they are near, and reports the secrets it finds that the rule's
// entropy threshold and allowlists let through.
func (rd *redactor) match(r *secretRule, v string, ws, we int, add func(int, int)) {
	ws, we = snapStart(v, ws), snapEnd(v, we)
	w := v[ws:we]
	for _, loc := range r.re.FindAllStringSubmatchIndex(w, -1) {
		// As gitleaks does: the match without surrounding newlines, and
		// the secret in the chosen group, else the first group that
		// matched something, else the match.
		ma, mb := loc[0], loc[1]
		for ma < mb && w[ma] == '\n' {
			ma++
		}
		for mb > ma && w[mb-1] == '\n' {
			mb--
		}
		sa, sb := ma, mb
		if g := r.secretGroup; g > 0 && 2*g+1 < len(loc) {
			sa, sb = loc[2*g], loc[2*g+1]
		} else if g == 0 {
			for k := 2; k+1 < len(loc); k += 2 {
				if loc[k] >= 0 && loc[k+1] > loc[k] {
					sa, sb = loc[k], loc[k+1]
					break
				}
			}
		}
		if sa < 0 || sb <= sa {
			continue
		}
		secret, m := w[sa:sb], w[ma:mb]
		if r.entropy > 0 && shannonEntropy(secret) <= r.entropy {
			continue
		}
		if q := w[sa]; sb-sa > 2 && (q == '"' || q == '\'' || q == '`') && w[sb-1] == q {
			// A secret group with its quotes (hashicorp-tf-password's):
			// the quotes stay, as they do for every other rule.
			sa, sb = sa+1, sb-1
		}
		// Only a list with regexTarget "line" reads the line.
		line := ""
		if r.needsLine {
			line = lineAround(v, ws+ma, ws+mb)
		}
		if r.gitleaks && rd.global.allows(secret, m, line) {
			continue
		}
		allowed := false
		for _, a := range r.allow {
			if a.allows(secret, m, line) {
				allowed = true
				break
			}
		}
		if !allowed {
			add(ws+sa, ws+sb)
		}
	}
}

// snapNear is how far a window's edge moves to reach a line's edge, so
// that ^, $ and \b at the edge mean what they mean in the whole text.
const snapNear = 64

func snapStart(v string, i int) int {
	if i <= 0 {
		return 0
	}
	lo := max(0, i-snapNear)
	if j := strings.LastIndexByte(v[lo:i], '\n'); j >= 0 {
		return lo + j + 1
	}
	if j := strings.LastIndexAny(v[lo:i], " \t"); j >= 0 {
		return lo + j + 1
	}
	return i
}

func snapEnd(v string, i int) int {
	if i >= len(v) {
		return len(v)
	}
	hi := min(len(v), i+snapNear)
	if j := strings.IndexByte(v[i:hi], '\n'); j >= 0 {
		return i + j
	}
	if j := strings.IndexAny(v[i:hi], " \t"); j >= 0 {
		return i + j
	}
	return i
}

// lineAround is the lines that v[a:b] lies on, up to maxSpan bytes either
// side: what a gitleaks allowlist with regexTarget "line" reads.
func lineAround(v string, a, b int) string {
	lo := max(0, a-maxSpan)
	start := lo + strings.LastIndexByte(v[lo:a], '\n') + 1
	hi := min(len(v), b+maxSpan)
	end := hi
	if j := strings.IndexByte(v[b:hi], '\n'); j >= 0 {
		end = b + j
	}
	return v[start:end]
}

// replaceSpans replaces the spans of tv's view in its raw text. A span
// is widened to whole escapes, and a quote of the raw text that is not
// escaped, which JSON needs, is kept: the span is cut around it.
func replaceSpans(tv *textView, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	raw := tv.raw
	var b strings.Builder
	b.Grow(len(raw))
	last := 0
	emit := func(x, y int) {
		if y > x {
			b.WriteString(raw[last:x])
			b.WriteString(Redacted)
			last = y
		}
	}
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start <= cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		ra, rb := max(tv.rawStart(cur.start), last), tv.rawEnd(cur.end)
		seg := ra
		for j := ra; j < rb; j++ {
			switch raw[j] {
			case '\\':
				j++
			case '"':
				emit(seg, j)
				seg = j + 1
			}
		}
		emit(seg, rb)
	}
	b.WriteString(raw[last:])
	return b.String()
}
