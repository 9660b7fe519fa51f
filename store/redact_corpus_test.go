package store

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
)

// gitleaksCorpus is testdata/redact/gitleaks-corpus.json: for each rule,
// the true and false positives its gitleaks generator validates it
// against (MIT licensed; gencorpus.sh beside it rebuilds it).
type gitleaksCorpus struct {
	Version string `json:"version"`
	Rules   []struct {
		ID      string            `json:"id"`
		TPs     []string          `json:"tps"`
		FPs     []string          `json:"fps"`
		PathTPs map[string]string `json:"path_tps"`
		PathFPs map[string]string `json:"path_fps"`
	} `json:"rules"`
}

// findOne is what rule id alone finds in s, as view spans.
func findOne(t *testing.T, rd *redactor, id, s string) []span {
	t.Helper()
	for i, r := range rd.rules {
		if r.id == id {
			sc := &redactScratch{starts: make([][]int, len(rd.rules)), gate: make([]bool, len(rd.rules))}
			rd.find(newTextView(s).text, int32(i), sc)
			return sc.spans
		}
	}
	t.Fatalf("no rule %s", id)
	return nil
}

// TestRedactGitleaksCorpus runs every gitleaks rule over its generator's
// examples: each true positive is found by the rule alone, running only
// around its keywords as Redact does, and redacted by Redact; no false
// positive is found by the rule. A false positive that is one only for
// its file path (a path-scoped rule's example in another file) does not
// apply: redaction has no path, and such rules run on all text. A rule
// kz replaces with its own must see what it finds redacted by them.
func TestRedactGitleaksCorpus(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/redact/gitleaks-corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus gitleaksCorpus
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	version, err := os.ReadFile("redactrules/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if corpus.Version != strings.TrimSpace(string(version)) {
		t.Fatalf("corpus of gitleaks %s, rules of %s: run testdata/redact/gencorpus.sh", corpus.Version, version)
	}
	var cfg gitleaksConfig
	if err := toml.Unmarshal(gitleaksTOML, &cfg); err != nil {
		t.Fatal(err)
	}
	paths := map[string]*regexp.Regexp{}
	replaced := map[string]*secretRule{}
	for _, r := range cfg.Rules {
		if r.Path != "" {
			paths[r.ID] = regexp.MustCompile(r.Path)
		}
		if _, ok := skippedGitleaksRules()[r.ID]; ok && r.Regex != "" {
			// The rule as gitleaks runs it: its expression over the whole
			// text, with its entropy and allowlists.
			g := &secretRule{id: r.ID, expr: r.Regex, secretGroup: r.SecretGroup, entropy: r.Entropy, gitleaks: true}
			for _, a := range r.Allowlists {
				g.allow = append(g.allow, newAllowlist(a))
			}
			if err := g.compile(); err != nil {
				t.Fatal(err)
			}
			replaced[r.ID] = g
		}
	}
	rd := theRedactor()
	tps, fps, broad := 0, 0, 0
	for _, c := range corpus.Rules {
		id := c.ID
		if id == "pkcs12-file" {
			// Skipped: a rule on file names.
			continue
		}
		if g := replaced[id]; g != nil {
			// Replaced by kz's rules: what gitleaks finds in each true
			// positive is redacted.
			for _, tp := range c.TPs {
				tps++
				v := newTextView(tp).text
				var found []string
				rd.match(g, v, 0, len(v), func(a, b int) { found = append(found, v[a:b]) })
				if len(found) == 0 {
					t.Fatalf("%s: gitleaks' own expression finds nothing in\n%s", id, tp)
				}
				got := Redact(tp)
				for _, secret := range found {
					if strings.Contains(got, secret) {
						t.Errorf("%s (replaced by kz's rules): %q stays in\n%s", id, secret, got)
					}
				}
			}
			continue
		}
		var pathTPs, pathFPs []string
		for _, p := range sortedKeys(c.PathTPs) {
			pathTPs = append(pathTPs, c.PathTPs[p])
		}
		for _, p := range sortedKeys(c.PathFPs) {
			if re := paths[c.ID]; re == nil || re.MatchString(p) {
				pathFPs = append(pathFPs, c.PathFPs[p])
			}
		}
		for _, tp := range append(c.TPs, pathTPs...) {
			tps++
			if len(findOne(t, rd, id, tp)) == 0 {
				t.Errorf("%s: true positive not found:\n%s", id, tp)
			}
			if Redact(tp) == tp {
				t.Errorf("%s: true positive not redacted:\n%s", id, tp)
			}
		}
		for _, fp := range append(c.FPs, pathFPs...) {
			fps++
			if sp := findOne(t, rd, id, fp); len(sp) > 0 {
				t.Errorf("%s: false positive found (%q):\n%s", id, newTextView(fp).text[sp[0].start:sp[0].end], fp)
			}
			if Redact(fp) != fp {
				broad++
			}
		}
	}
	t.Logf("gitleaks %s: %d rules, %d true positives, %d false positives; kz's own rules redact %d of those false positives",
		corpus.Version, len(corpus.Rules), tps, fps, broad)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
