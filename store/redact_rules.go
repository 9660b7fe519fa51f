package store

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
)

// gitleaksRuleSet (redact_gitleaks.go) is gitleaks' default rule set,
// kept as data: the file the project generates and ships as
// config/gitleaks.toml, of the version in redactrules/VERSION, under its
// MIT license (redactrules/LICENSE), kept as redactrules/gitleaks.toml and
// turned into Go by TestGitleaksRuleSet. Parsing the TOML was a quarter of
// what building the rules cost every kz process; the Go value costs
// nothing to load.
//
// kz uses the rules as data rather than gitleaks as a library. The
// library (its detect package) brings in some sixty modules (viper,
// cobra, archive readers, a terminal styler), adds 10 MB to a binary,
// takes 116 ms to build its detector and, since it runs every rule whose
// keyword occurs anywhere over the whole text, redacted 1 MB of prose
// with links at 3 MB/s on this machine. The rules are plain Go (RE2)
// regular expressions, so kz compiles them with regexp, which runs in
// time linear in its input, and runs each only on small windows around
// its keywords (see redactor.find).

// gitleaksConfig is the part of gitleaks' TOML schema that the default
// rule set uses.
type gitleaksConfig struct {
	Allowlist gitleaksAllowlist `toml:"allowlist"`
	Rules     []gitleaksRule    `toml:"rules"`
}

// gitleaksRule is one rule of gitleaks' TOML schema.
type gitleaksRule struct {
	ID          string              `toml:"id"`
	Regex       string              `toml:"regex"`
	Path        string              `toml:"path"`
	SecretGroup int                 `toml:"secretGroup"`
	Entropy     float64             `toml:"entropy"`
	Keywords    []string            `toml:"keywords"`
	SkipReport  bool                `toml:"skipReport"`
	Allowlists  []gitleaksAllowlist `toml:"allowlists"`
	Required    []any               `toml:"required"`
}

type gitleaksAllowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

// skippedGitleaksRules are the rules kz does not run, and why. A rule
// that is neither here nor run makes loading fail, so an update of the
// rule set cannot drop one silently. The map is built on first use, so that
// every kz process does not pay for it at start.
var skippedGitleaksRules = sync.OnceValue(func() map[string]string {
	return map[string]string{
		// It has no regular expression: it reports a file by its name.
		"pkcs12-file": "a rule on file names only; a transcript has no file name",
		// kz's own key block scanner redacts every kind of private key block,
		// a block cut short included, whole; gitleaks' rule needs the END
		// line.
		"private-key": "replaced by kz's key block scanner (kz-private-key-block)",
		// Both look for curl, then anything up to six lines on, then the
		// flag: Go's regexp keeps that search alive across every line of a
		// script of curl commands, which redacted such a script at 1 MB/s.
		// kz's rules find the same credentials after -H, -u and --user in
		// any command, in bounded windows; TestRedactGitleaksCorpus checks
		// they redact what these rules find in gitleaks' examples.
		"curl-auth-header": "replaced by kz-curl-header and kz-authorization-header (gitleaks' form costs 1 MB/s on a script of curl commands)",
		"curl-auth-user":   "replaced by kz-cli-user-password (gitleaks' form costs 1 MB/s on a script of curl commands)",
	}
})

// secretRule is one detector: a regular expression with the keywords
// that must occur for it to run, or a scanner written in Go.
type secretRule struct {
	id       string
	expr     string
	keywords []string // lower case
	// secretGroup is the group that holds the secret; 0 means the first
	// group that matched something, or the whole match.
	secretGroup int
	// entropy is the Shannon entropy a secret must exceed, 0 for none.
	entropy float64
	allow   []*allowlist
	// gitleaks says the global allowlist of gitleaks' rule set applies.
	gitleaks bool
	// needsLine says an allowlist of the rule reads the match's line.
	needsLine bool
	plan      rulePlan
	// scan is a rule written in Go: it gets the view and the starts of
	// its keywords, and reports the secrets it finds.
	scan func(v string, starts []int, add func(start, end int))

	// The expression and the heads' tails are compiled when a keyword of
	// the rule first occurs: most rules never run in a given process.
	once   sync.Once
	re     *regexp.Regexp
	tails  []*regexp.Regexp
	checks []byteCheck
	err    error
}

// byteCheck is a headPlan's skip and first as tables.
type byteCheck struct {
	skip, first [256]bool
	max         int
	on          bool
}

// pass says whether, from e on, at most max bytes of skip lead to one of
// first: a tail that fails it cannot match there.
func (c *byteCheck) pass(v string, e int) bool {
	if !c.on {
		return true
	}
	for i := e; i < len(v) && (c.max < 0 || i-e <= c.max); i++ {
		if c.first[v[i]] {
			return true
		}
		if !c.skip[v[i]] {
			return false
		}
	}
	return false
}

// compile compiles the rule's expressions once; a rule that does not
// compile (which TestRedactRulesLoad rules out) never matches.
func (r *secretRule) compile() error {
	r.once.Do(func() {
		if r.scan != nil {
			return
		}
		if r.re, r.err = regexp.Compile(r.expr); r.err != nil {
			r.err = fmt.Errorf("rule %s: %w", r.id, r.err)
			return
		}
		r.tails = make([]*regexp.Regexp, len(r.plan.heads))
		r.checks = make([]byteCheck, len(r.plan.heads))
		for i, h := range r.plan.heads {
			if h.first != "" {
				c := &r.checks[i]
				c.on, c.max = true, h.skipMax
				for j := 0; j < len(h.skip); j++ {
					c.skip[h.skip[j]] = true
				}
				for j := 0; j < len(h.first); j++ {
					c.first[h.first[j]] = true
				}
			}
			if h.tail == "" {
				continue
			}
			// The tail sees the head's last byte, so that a \b or \B it
			// starts with is decided as in the whole text.
			if r.tails[i], r.err = regexp.Compile(`^(?s:.)(?:` + h.tail + `)`); r.err != nil {
				r.err = fmt.Errorf("rule %s, tail %q: %w", r.id, h.tail, r.err)
				return
			}
		}
	})
	return r.err
}

// setPlan gives the rule its plan: the one made ahead of time when it is
// for the same expression, else a fresh analysis.
func (r *secretRule) setPlan() error {
	if p, ok := redactPlans()[r.id]; ok && p.sum == exprSum(r.expr) {
		r.plan = p
		return nil
	}
	p, err := analyze(r.expr, r.keywords)
	if err != nil {
		return fmt.Errorf("rule %s: %w", r.id, err)
	}
	r.plan = p
	return nil
}

// maxSpan bounds the bytes a window reaches before or after a keyword
// when the expression itself does not; a longer secret is redacted up to
// it.
const maxSpan = 4096

// allowlist is a gitleaks allowlist: what makes a finding not a secret.
type allowlist struct {
	and bool
	// target is what the regexes are tried on: the secret (""), the
	// whole match ("match") or its line ("line").
	target string
	// expr is the regexes as one alternation, "" for none; re compiles it
	// on first use. Most lists never see a finding in a given process,
	// and compiling them all took a quarter of the rules' load. An
	// expression that does not compile (TestRedactRulesLoad rules that
	// out) allows nothing, so the finding stays redacted.
	expr string
	re   func() (*regexp.Regexp, error)
	stop []string
	// pathsOrCommits says the list also names paths or commits, which a
	// transcript never has: with the AND condition it then allows
	// nothing.
	pathsOrCommits bool
}

// newAllowlist reads a gitleaks allowlist; its regexes are compiled when
// first needed (see allowlist.expr).
func newAllowlist(a gitleaksAllowlist) *allowlist {
	al := &allowlist{and: strings.EqualFold(a.Condition, "AND"), target: a.RegexTarget,
		pathsOrCommits: len(a.Paths) > 0 || len(a.Commits) > 0}
	if len(a.Regexes) > 0 {
		al.expr = "(?:" + strings.Join(a.Regexes, ")|(?:") + ")"
		expr := al.expr
		al.re = sync.OnceValues(func() (*regexp.Regexp, error) {
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, fmt.Errorf("allowlist regexes: %w", err)
			}
			return re, nil
		})
	}
	for _, w := range a.StopWords {
		al.stop = append(al.stop, strings.ToLower(w))
	}
	return al
}

// compile returns the list's regexes compiled, nil when it has none.
func (a *allowlist) compile() (*regexp.Regexp, error) {
	if a.expr == "" {
		return nil, nil
	}
	return a.re()
}

// allows reports whether the list says a finding is not a secret, as
// gitleaks' checkFindingAllowed does for a text without path or commit.
func (a *allowlist) allows(secret, match, line string) bool {
	t := secret
	switch a.target {
	case "match":
		t = match
	case "line":
		t = line
	}
	reOK := false
	if a.expr != "" && t != "" {
		re, err := a.compile()
		reOK = err == nil && re.MatchString(t)
	}
	stopOK := false
	if len(a.stop) > 0 && secret != "" {
		lower := strings.ToLower(secret)
		for _, w := range a.stop {
			if strings.Contains(lower, w) {
				stopOK = true
				break
			}
		}
	}
	if !a.and {
		return reOK || stopOK
	}
	if a.pathsOrCommits || (a.expr == "" && len(a.stop) == 0) {
		return false
	}
	return (a.expr == "" || reOK) && (len(a.stop) == 0 || stopOK)
}

// shannonEntropy is gitleaks' measure of how random a secret looks: over
// its characters, divided by its length in bytes, as gitleaks does.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	for _, c := range counts {
		f := float64(c) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// loadGitleaks reads the embedded rule set into rules and its global
// allowlist.
func loadGitleaks() ([]*secretRule, *allowlist, error) {
	cfg := &gitleaksRuleSet
	global := newAllowlist(cfg.Allowlist)
	var rules []*secretRule
	for _, gr := range cfg.Rules {
		if _, ok := skippedGitleaksRules()[gr.ID]; ok {
			continue
		}
		if gr.Regex == "" || gr.SkipReport || len(gr.Required) > 0 {
			// Parts of composite rules and rules on paths alone would need
			// gitleaks' multi-part semantics: fail, so that an update of
			// the rule set that brings one gets a decision.
			return nil, nil, fmt.Errorf("gitleaks rule %s: unsupported form (no regex, skipReport or required parts)", gr.ID)
		}
		// A rule limited to some file paths (a .tf, a nuget.config) runs
		// on all text: a transcript has no path, and its tool output is
		// often such a file.
		r := &secretRule{id: gr.ID, expr: gr.Regex, secretGroup: gr.SecretGroup, entropy: gr.Entropy, gitleaks: true}
		for _, k := range gr.Keywords {
			r.keywords = append(r.keywords, strings.ToLower(k))
		}
		for _, a := range gr.Allowlists {
			al := newAllowlist(a)
			r.allow = append(r.allow, al)
			r.needsLine = r.needsLine || al.target == "line"
		}
		if err := r.setPlan(); err != nil {
			return nil, nil, err
		}
		rules = append(rules, r)
	}
	return rules, global, nil
}

// matchAt says whether l occurs in v at p.
func (l headLit) matchAt(v string, p int) bool {
	if len(v)-p < len(l.s) {
		return false
	}
	if l.fold {
		return strings.EqualFold(v[p:p+len(l.s)], l.s)
	}
	return v[p:p+len(l.s)] == l.s
}

// isWordByte is RE2's \w.
func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
