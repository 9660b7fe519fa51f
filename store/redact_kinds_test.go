package store

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// secretKind is one kind of secret as it shows up in a transcript: text
// holding it, the secret that must not be stored, and the context around
// it that must stay for the reader.
type secretKind struct {
	name, text, secret, keep string
}

const (
	pgpKey     = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQWGBGSVV4YBDAClvRnxezIRy2Yv7SFlzC0iFiRF/O/jePSw+XYhvcrTaqSYTGic\nb3fT2Kq9mXw4Zr8Ls0Vn1Pd6Jh5Gc7Ye3Ua2Qi9Bo4Xe1Wm8Nt6Rk0Sj3Ll5Fp7\n=8xQN\n-----END PGP PRIVATE KEY BLOCK-----"
	base64Body = "MIIEowIBAAKCAQEAn6O8li+SX4m98LLYt/PKSzEmQ++ZBD7Loh9P13f4yQ92EF3\nyxR5MsXFu9PRsrYQA7/4UTPHiC4y2sAVCBg4C2yyBpUEtMQjyCESi6YwxK2Lq7Dc"
)

func keyBlock(label string) string {
	return "-----BEGIN " + label + "-----\n" + base64Body + "\n-----END " + label + "-----"
}

// secretKinds are the kinds the issue names (the thirteen that were
// stored in clear and the six that were not) and more of kz's own rules.
var secretKinds = []secretKind{
	{"curl -u", "curl -u deploy:Xk7pQ2mZ9vLr https://api.example.com/v1/builds", "Xk7pQ2mZ9vLr", "curl -u "},
	{"mysql -p", "mysql -h db.internal -u root -pHq8sW3nLx2Tz app < dump.sql", "Hq8sW3nLx2Tz", "mysql -h db.internal -u root -p"},
	{"PGPASSWORD", "PGPASSWORD=Zr4tY8uQ1wEe psql -h db -U app -c 'select 1'", "Zr4tY8uQ1wEe", "PGPASSWORD="},
	{"--password=", "docker login --username ci --password=Vb6nM2kL9qWs registry.example.com", "Vb6nM2kL9qWs", "--password="},
	{"--password x", "mongosh --username admin --password Jd3kF8sL2pAa --host db", "Jd3kF8sL2pAa", "--password "},
	{"sshpass -p", "sshpass -p 'Wq9eR4tY7uIo' ssh deploy@build.example.com uptime", "Wq9eR4tY7uIo", "sshpass -p '"},
	{"SendGrid", "SENDGRID=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 sent", "ngeVfQFYQlKU0ufo8x5d1A", "SENDGRID="},
	{"DigitalOcean", "doctl auth init -t dop_v1_1f5d6c9b2a8e7d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8", "1f5d6c9b2a8e7d3c4b5a6978", "doctl auth init -t "},
	{"Google OAuth", "access token: ya29.a0AfB_byC7dKq9Lm2Np4Rs6Tv8Xz1Bd3Fh5Jk7Mn9Pq2St4Vw6Yz8Ac0Eg2Gi4Kl6No8", "a0AfB_byC7dKq9Lm2Np4Rs6Tv8", "access token: "},
	{"Azure AccountKey", "DefaultEndpointsProtocol=https;AccountName=kzstore;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
		"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq", "AccountKey="},
	{"Twilio", "TWILIO_API_KEY_SID=SK4f0c2b6e8a1d3f5b7c9e0a2d4f6b8c1e and then", "4f0c2b6e8a1d3f5b7c9e0a2d4f6b8c1e", "TWILIO_API_KEY_SID="},
	{"JSON password", `{"db": {"user": "app", "password": "Tr0ub4dor-3xJ"}, "port": 5432}`, "Tr0ub4dor-3xJ", `"password": "`},
	{"YAML password", "database:\n  user: app\n  password: Tr0ub4dorYml9\n  port: 5432", "Tr0ub4dorYml9", "  password: "},
	{"PGP private key", pgpKey, "lQWGBGSVV4YBDAClvRnxezIRy2Yv7SFlzC0iFiRF", ""},
	// Those the old list already knew.
	{"AWS access key", "aws_access_key_id = AKIAQ3EGUMZ7XKQ2VL4P", "AKIAQ3EGUMZ7XKQ2VL4P", "aws_access_key_id = "},
	{"AWS secret key", "aws_secret_access_key = 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", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8RtKpL2m", "aws_secret_access_key = "},
	{"GitHub PAT", "git clone https://x-access-token:ghp_R8mQ2vL5nK9pX3sT7wY1zA4cE6gI0jH2bD5f@github.com/o/r", "R8mQ2vL5nK9pX3sT7wY1zA4cE6gI0jH2bD5f", "github.com/o/r"},
	{"Anthropic key", "export ANTHROPIC_API_KEY=sk-ant-api03-Zq8Xw2Lp5Nm7Kr3Tv9Bc1Df4Gh6Jk0Ls2Qa8We5Rt7Yu9Io1Pa3Sd5Fg7Hj9Kl2", "Zq8Xw2Lp5Nm7Kr3Tv9Bc1Df4Gh6", "export ANTHROPIC_API_KEY="},
	{"OpenAI key", "client = OpenAI(api_key=\"sk-proj-Q4w8E2r6T0y3U7i1O5p9A2s6D0f4G8h2J6k0L4z8X2c6V0b4\")", "Q4w8E2r6T0y3U7i1O5p9A2s6D0f4", "client = OpenAI(api_key="},
	{"Slack bot token", "SLACK_BOT=xoxb-2048765301-4096123457-Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0 posted", "Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0", "SLACK_BOT="},
	{"Stripe key", "stripe.api_key = 'sk_live_51Hq8Xw2Lp5Nm7Kr3Tv9Bc1Df4Gh6Jk0Ls2'", "51Hq8Xw2Lp5Nm7Kr3Tv9Bc1Df4", "stripe.api_key = '"},
	// More of kz's own.
	{"Bearer header", "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc' https://api.example.com", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "Authorization: Bearer "},
	{"Basic header", "Authorization: Basic ZGVwbG95OlhrN3BRMm1aOXZMcg==", "ZGVwbG95OlhrN3BRMm1aOXZMcg", "Authorization: Basic "},
	{"API key header", "curl -H 'X-API-Key: Kq7Wm2Xp9Lr4Tz8Vb3Nc' https://api.example.com", "Kq7Wm2Xp9Lr4Tz8Vb3Nc", "X-API-Key: "},
	{"URL password", "DATABASE_URL=postgres://app:Pw5Rt8Yu2Io4@db.example.com:5432/app", "Pw5Rt8Yu2Io4", "postgres://app:"},
	{".env password", "DB_HOST=db\nDB_PASSWORD=Lm4Nb7Vc1Xz9\nDB_PORT=5432", "Lm4Nb7Vc1Xz9", "DB_PASSWORD="},
	{"TOML password", "[database]\nuser = \"app\"\npassword = \"Gh7Jk2Lm5Np8\"\n", "Gh7Jk2Lm5Np8", "password = \""},
	{"JWT", "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c ok", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV", "token "},
	{"RSA key", keyBlock("RSA PRIVATE KEY"), "yxR5MsXFu9PRsrYQA7", ""},
	{"EC key", keyBlock("EC PRIVATE KEY"), "yxR5MsXFu9PRsrYQA7", ""},
	{"DSA key", keyBlock("DSA PRIVATE KEY"), "yxR5MsXFu9PRsrYQA7", ""},
	{"OPENSSH key", keyBlock("OPENSSH PRIVATE KEY"), "yxR5MsXFu9PRsrYQA7", ""},
	{"ENCRYPTED key", keyBlock("ENCRYPTED PRIVATE KEY"), "yxR5MsXFu9PRsrYQA7", ""},
	{"PKCS8 key", keyBlock("PRIVATE KEY"), "yxR5MsXFu9PRsrYQA7", ""},
	{"key cut short", "$ cat id_rsa | head -3\n-----BEGIN RSA PRIVATE KEY-----\n" + base64Body, "yxR5MsXFu9PRsrYQA7", "$ cat id_rsa | head -3\n"},
}

// sampledGitleaksKinds are rules of gitleaks' set whose first true
// positive in the corpus the kind tests run too.
var sampledGitleaksKinds = []string{"gitlab-pat", "npm-access-token", "huggingface-access-token", "shopify-access-token",
	"doppler-api-token", "postman-api-token", "databricks-api-token", "linear-api-key", "pypi-upload-token", "generic-api-key"}

// allSecretKinds adds the sampled gitleaks kinds, with the secret each
// rule finds in its example.
func allSecretKinds(t *testing.T) []secretKind {
	t.Helper()
	b, err := os.ReadFile("testdata/redact/gitleaks-corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus gitleaksCorpus
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	kinds := append([]secretKind(nil), secretKinds...)
	rd := theRedactor()
	for _, id := range sampledGitleaksKinds {
		for _, c := range corpus.Rules {
			if c.ID != id {
				continue
			}
			// A single-line example: a multi-line one may be cut where
			// its lines meet (see the README).
			for _, tp := range c.TPs {
				if strings.Contains(tp, "\n") || strings.ContainsAny(tp, `<>&\`) {
					continue
				}
				sp := findOne(t, rd, id, tp)
				if len(sp) == 0 {
					t.Fatalf("%s finds nothing in %q", id, tp)
				}
				kinds = append(kinds, secretKind{"gitleaks " + id, "the tool printed: " + tp, tp[sp[0].start:sp[0].end], "the tool printed: "})
				break
			}
		}
	}
	return kinds
}

// secretPieces are parts of a secret, any of which stored would leak some
// of it: every eight bytes at a step of four.
func secretPieces(secret string) []string {
	if len(secret) <= 8 {
		return []string{secret}
	}
	var out []string
	for i := 0; i+8 <= len(secret); i += 4 {
		out = append(out, secret[i:i+8])
	}
	return out
}

// TestRedactEachKind: each kind is redacted in plain text and in text
// encoded as JSON (as the store keeps it), and what is around it stays.
func TestRedactEachKind(t *testing.T) {
	t.Parallel()
	for _, k := range allSecretKinds(t) {
		got := Redact(k.text)
		for _, p := range secretPieces(k.secret) {
			if strings.Contains(got, p) {
				t.Errorf("%s: %q stays in %q", k.name, p, got)
				break
			}
		}
		if !strings.Contains(got, Redacted) || !strings.Contains(got, k.keep) {
			t.Errorf("%s: context %q lost: %q", k.name, k.keep, got)
		}
		data, err := json.Marshal(map[string]string{"text": "before\n" + k.text + "\nafter"})
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(Redact(string(data))), &back); err != nil {
			t.Errorf("%s: redacted JSON does not decode: %v", k.name, err)
			continue
		}
		if want := "before\n" + got + "\nafter"; back["text"] != want {
			t.Errorf("%s: redacted as JSON\n%q\nplain\n%q", k.name, back["text"], want)
		}
	}
}

// streamSplits are the ways a kind's text is cut into deltas: one byte at
// a time, seven, at random sizes, and right inside the secret.
func streamSplits(text, secret string, r *rand.Rand) map[string][]string {
	cut := func(sizes func(i int) int) []string {
		var out []string
		for i, rest := 0, text; rest != ""; i++ {
			n := min(max(sizes(i), 1), len(rest))
			out = append(out, rest[:n])
			rest = rest[n:]
		}
		return out
	}
	at := strings.Index(text, secret)
	mid := at + len(secret)/2
	return map[string][]string{
		"bytes":  cut(func(int) int { return 1 }),
		"sevens": cut(func(int) int { return 7 }),
		"random": cut(func(int) int { return 1 + r.IntN(24) }),
		"inside": {text[:at+1], text[at+1 : mid], text[mid : mid+1], text[mid+1:]},
	}
}

// TestStreamedKindsNeverReachTheDisk streams each kind, cut into deltas
// in four ways, through a real session's writer, with pauses that let
// batches be written while the secret is half streamed, and also stores
// it as a tool's output. Then neither the database file nor its
// write-ahead log, nor the markdown and JSON exports, hold any piece of
// the secret.
func TestStreamedKindsNeverReachTheDisk(t *testing.T) {
	t.Parallel()
	for _, k := range allSecretKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			text := "Here is what I found:\n" + k.text + "\nThat is all."
			r := rand.New(rand.NewPCG(uint64(len(k.name)), 7))
			maxRows := 0
			defer func() {
				if maxRows < 2 {
					t.Errorf("no split went to the database in more than %d row: the secret was never cut while written", maxRows)
				}
			}()
			for split, deltas := range streamSplits(text, k.secret, r) {
				st := openTemp(t)
				ctx := context.Background()
				if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
					t.Fatal(err)
				}
				w := st.NewWriter()
				seq := int64(0)
				_ = w.Append(ev("s", 1, engine.EventUserMessage, "show me the config"))
				seq++
				at, done, pauses := strings.Index(text, k.secret), 0, 0
				for _, d := range deltas {
					seq++
					_ = w.Append(ev("s", seq, engine.EventTextDelta, d))
					done += len(d)
					// Let a batch be written while the secret is cut.
					if done > at && done < at+len(k.secret) && pauses < 3 {
						time.Sleep(3 * batchDelay)
						pauses++
					}
				}
				// The answer whole, as the engine ends a streamed message.
				seq++
				_ = w.Append(ev("s", seq, engine.EventAssistantMessage, text))
				seq++
				start := ev("s", seq, engine.EventToolCallStarted, "")
				start.ToolCallID, start.Tool, start.Input = "c1", "bash", json.RawMessage(`{"command":"cat config"}`)
				seq++
				fin := ev("s", seq, engine.EventToolCallFinished, "")
				fin.ToolCallID, fin.Tool, fin.Output = "c1", "bash", k.text
				_ = w.Append(start)
				_ = w.Append(fin)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				// The pauses let the writer store the stream in several
				// rows (unless it holds it all back, as it does a key
				// block): the secret was cut while being written.
				var rows int
				if err := st.db.QueryRow(`SELECT count(*) FROM events WHERE type = 'text_delta'`).Scan(&rows); err != nil {
					t.Fatal(err)
				}
				maxRows = max(maxRows, rows)
				x, err := st.LoadExport(ctx, "s")
				if err != nil {
					t.Fatal(err)
				}
				var md, js bytes.Buffer
				if err := x.WriteMarkdown(&md); err != nil {
					t.Fatal(err)
				}
				if err := x.WriteJSON(&js); err != nil {
					t.Fatal(err)
				}
				places := map[string][]byte{"markdown export": md.Bytes(), "json export": js.Bytes()}
				for _, suffix := range []string{"", "-wal"} {
					b, err := os.ReadFile(st.path + suffix)
					if err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					places["kz.db"+suffix] = b
				}
				for where, b := range places {
					for _, p := range secretPieces(k.secret) {
						if bytes.Contains(b, []byte(p)) {
							t.Errorf("%s split: %q is in %s", split, p, where)
							break
						}
					}
				}
				if !bytes.Contains(md.Bytes(), []byte("That is all.")) || !bytes.Contains(md.Bytes(), []byte(Redacted)) {
					t.Errorf("%s split: the answer is not in the export:\n%s", split, md.String())
				}
				_ = st.Close()
			}
		})
	}
}

// TestRedactKeepsWhatIsNotSecret: code, prose and names that look like the
// rules' keywords stay as they are.
func TestRedactKeepsWhatIsNotSecret(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"the task-runner-configuration-file and disk-usage-monitoring-tool-v2",
		"MAX_TOKENS=1000000000 and CSRF_TOKEN_HEADER=X-CSRF-Token GITHUB_TOKEN_FILE=/run/secrets/gh",
		"token := getToken(ctx)",
		"password = os.Getenv(\"DB_PASSWORD\")",
		"    password: str",
		"api_key = settings.API_KEY",
		"git push -u origin main && docker run -u 1000:1000 alpine",
		"use --password to pass it, or --password-stdin; --token $GH_TOKEN",
		"mysql -u root -p app",
		"See https://example.com:8080/path and http://localhost:3000 and git@github.com:o/r.git",
		"Private keys start with -----BEGIN RSA PRIVATE KEY----- and the rest of this sentence is prose.",
		"-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----",
		"We count the tokens of each message; the key is in the vault, the secret manager rotates it.",
		"Authorization: Bearer $TOKEN",
		"DB_PASSWORD=${DB_PASSWORD}",
		`"password": "{{ .Values.password }}"`,
		"PWD=/home/me/src OLDPWD=/tmp",
		"export PATH=$HOME/bin:$PATH",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q)\n= %q", s, got)
		}
	}
}

// TestRedactManyKeysStaysLinear: text packed with keywords (every one a
// candidate) costs time in proportion to its length.
func TestRedactManyKeysStaysLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("timing under the race detector says nothing")
	}
	unit := "api key token secret password -----BEGIN PRIVATE KEY----- :// curl -u sk- ey s. AKIA Bearer "
	_ = Redact(unit) // The rules compile on first use.
	// The best of a few runs, in CPU time: the machine is shared.
	cost := func(n int) time.Duration {
		s := strings.Repeat(unit, n/len(unit))
		best := time.Duration(1 << 62)
		for range 5 {
			start := processCPU(t)
			_ = Redact(s)
			best = min(best, processCPU(t)-start)
		}
		return best
	}
	small, large := cost(64<<10), cost(512<<10)
	t.Logf("64 KB: %v, 512 KB: %v of CPU", small, large)
	if ratio := float64(large) / float64(small); ratio > 12 {
		t.Errorf("8 times the text took %.1f times as long (%v, %v)", ratio, small, large)
	}
}
