package store

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSentences read like an answer about code: the words a coding
// assistant prints most, a few of which are keywords of some rule (an
// "api", a "token" count), as in real answers.
var benchSentences = []string{
	"The handler in store/writer.go flushes the queue before it returns, so the caller sees every event it appended.",
	"I changed the loop to stop at the first error and wrap it with the name of the file that failed to open.",
	"Running go test ./... now passes on both packages; the race detector reports nothing.",
	"This function reads the configuration once at startup and caches the parsed result in a package variable.",
	"The test used a fixed sleep, which made it flaky on a loaded machine; it now waits on a channel instead.",
	"Next I would move the retry policy into its own type, with a backoff that doubles up to one minute.",
	"The public api of the package stays the same: only the unexported helpers moved to a new file.",
	"We count the tokens of each message to decide when the history must be compacted.",
	"func (w *Writer) Flush(ctx context.Context) error { return w.wait(ctx, w.appended) }",
	"for i, line := range strings.Split(out, \"\\n\") { fmt.Printf(\"%4d %s\\n\", i+1, line) }",
	"The benchmark shows 180k events per second on this machine, within the budget we agreed on.",
	"If the migration fails halfway, the transaction rolls back and the old schema is left untouched.",
}

// benchURLs are links of the kinds answers hold.
var benchURLs = []string{
	"https://pkg.go.dev/database/sql#DB.BeginTx",
	"https://github.com/kaizen-code/kz/blob/main/store/writer.go#L120",
	"https://go.dev/doc/effective_go#errors",
	"http://localhost:8080/healthz",
	"https://www.sqlite.org/wal.html",
	"https://docs.github.com/en/rest/pulls/pulls?apiVersion=2022-11-28",
}

// benchPlain are words that hold no keyword of any rule: the text of a
// build log or a listing, what most tool output is.
var benchPlain = []string{
	"compiling", "module", "internal", "render", "layout", "width", "height", "cell", "row", "column",
	"0.013", "ok", "PASS", "build", "cache", "hit", "miss", "file", "line", "12", "345", "6789", "done",
	"warning:", "unused", "variable", "in", "function", "main", "at", "src/main.c:42:7", "[1/20]", "linking",
	"CXX", "object", "lib/util.o", "mode", "0644", "size", "4096", "Mon", "Jun", "10", "12:00",
}

// benchScript are lines of a deploy script: a keyword of some rule on
// every line (curl, -H, -u, token, password, key, ://), and no secret.
var benchScript = []string{
	"curl -sS -H 'Accept: application/json' https://api.example.com/v1/items/$i | jq .token",
	"docker login --username ci --password-stdin registry.example.com < \"$TOKEN_FILE\"",
	"git push -u origin \"$BRANCH\" && echo \"api key rotated: see the secret manager\"",
	"export GITHUB_TOKEN_FILE=/run/secrets/gh MAX_TOKENS=4096",
	"psql \"postgres://app@db.internal:5432/app\" -c 'select count(*) from sessions'",
}

// benchText builds about n bytes of text: prose with a link on every
// line when withURLs, else build-log words without any rule's keyword.
func benchText(n int, withURLs bool) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n {
		if withURLs {
			b.WriteString(benchSentences[r.IntN(len(benchSentences))])
			b.WriteString(" See [the docs](")
			b.WriteString(benchURLs[r.IntN(len(benchURLs))])
			b.WriteString(").\n")
			continue
		}
		for range 12 {
			b.WriteString(benchPlain[r.IntN(len(benchPlain))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()[:n]
}

// BenchmarkRedact measures redaction of 1 MB: prose with links, a build
// log without any keyword, each of them as the store's funnel sees it,
// JSON-encoded inside an event, and a script with a keyword on every
// line, the worst case of ordinary text.
func BenchmarkRedact(b *testing.B) {
	for _, c := range []struct {
		name     string
		withURLs bool
		asJSON   bool
		script   bool
	}{
		{"urls", true, false, false},
		{"nokeyword", false, false, false},
		{"urls-json", true, true, false},
		{"nokeyword-json", false, true, false},
		{"script", false, false, true},
	} {
		s := benchText(1<<20, c.withURLs)
		if c.script {
			var b strings.Builder
			for i := 0; b.Len() < 1<<20; i++ {
				b.WriteString(benchScript[i%len(benchScript)])
				b.WriteByte('\n')
			}
			s = b.String()[:1<<20]
		}
		if c.asJSON {
			data, err := json.Marshal(map[string]string{"type": "tool_call_finished", "output": s})
			if err != nil {
				b.Fatal(err)
			}
			s = string(data)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			_ = Redact(s) // The rules are built on first use.
			cpu0 := cpuTime(b)
			for b.Loop() {
				if Redact(s) != s {
					b.Fatal("the benchmark text holds a secret")
				}
			}
			// On a machine shared with other work, wall time grows with
			// the load; the CPU redaction burns does not.
			b.ReportMetric(float64(len(s))*float64(b.N)/1e6/(cpuTime(b)-cpu0).Seconds(), "cpu-MB/s")
		})
	}
}

// TestBenchTextHoldsNoKeyword: the benchmark without keywords has none,
// so it measures the pass every text pays.
func TestBenchTextHoldsNoKeyword(t *testing.T) {
	t.Parallel()
	if s := benchText(64<<10, false); theRedactor().words.any(s) {
		t.Fatal("the build log of the benchmark holds a keyword")
	}
}

// BenchmarkNewRedactor builds the rule set, as every kz process does at
// its first write to the store: gitleaks' rules from their Go data, kz's
// own, the keyword automaton (expressions are compiled when first run).
func BenchmarkNewRedactor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newRedactor(); err != nil {
			b.Fatal(err)
		}
	}
}
