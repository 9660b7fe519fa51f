package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// TestStreamedSecretsAreRedactedWhole streams secrets split over several
// deltas, with pauses long enough for batches to be written in between,
// and checks that no piece of a secret reaches the database, that the
// rest of the text is all there, and that Flush writes what was held.
func TestStreamedSecretsAreRedactedWhole(t *testing.T) {
	t.Parallel()
	key := "sk-ant-api03-" + strings.Repeat("ZyXwVuTsRqPo", 8)
	gh := "ghp_" + strings.Repeat("AbCdEfGhIj", 4)
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAn0p4dW9r\nc2VjcmV0bGluZTI=\n-----END RSA PRIVATE KEY-----"
	stream := "Here is your key: " + key + " and a token " + gh + "\nand the file:\n" + pem +
		"\nAKIAIOSFODNN7EXAMPLQ\nDB_PASSWORD=Sup3rS3cretPw\n" + strings.Repeat("word ", 900) +
		"curl -H 'Authorization: Bearer abcdefghijklmnop1234567890XYZ' https://x\nthat is all, no newline at the end"
	// Cut the stream into deltas that split every secret, the way a model
	// streams tokens.
	var deltas []string
	for rest := stream; rest != ""; {
		n := min(7, len(rest))
		deltas = append(deltas, rest[:n])
		rest = rest[n:]
	}
	for _, pause := range []time.Duration{0, 3 * batchDelay} {
		st := openTemp(t)
		ctx := context.Background()
		if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
			t.Fatal(err)
		}
		w := st.NewWriter()
		seq := int64(0)
		for i, d := range deltas {
			seq++
			_ = w.Append(ev("s", seq, engine.EventTextDelta, d))
			if pause > 0 && i%5 == 0 {
				time.Sleep(pause)
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		var last int64
		if err := st.Events(ctx, "s", func(e engine.Event) error {
			if e.Seq <= last {
				t.Fatalf("sequence %d after %d", e.Seq, last)
			}
			last = e.Seq
			text.WriteString(e.Text)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var raw strings.Builder
		rows, err := st.db.Query("SELECT data FROM events")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			raw.WriteString(s)
		}
		_ = rows.Close()
		for _, piece := range []string{key[20:40], key[len(key)-12:], gh[10:30], "MIIEowIBAAKCAQEAn0p4dW9r", "c2VjcmV0bGluZTI",
			"IOSFODNN7EXAMPLQ", "Sup3rS3cretPw", "abcdefghijklmnop1234567890XYZ"} {
			if strings.Contains(raw.String(), piece) {
				t.Errorf("pause %v: a piece of a secret was stored: %q", pause, piece)
			}
		}
		want := Redact(stream)
		if text.String() != want {
			t.Errorf("pause %v: stored text\n%q\nwant\n%q", pause, text.String(), want)
		}
		if last != seq {
			t.Errorf("pause %v: last stored sequence %d, want %d", pause, last, seq)
		}
	}
}

func TestSafeCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", lineHold/5+1)
	for _, c := range []struct {
		in   string
		want int
	}{
		{"no newline yet sk-ant-api03-abc", 0},
		{"line one\nsk-ant-api03-abc", len("line one\n")},
		{"all done\n", len("all done\n")},
		{"text\n-----BEGIN PRIVATE KEY-----\nMIIE\nabc", len("text\n")},
		{"-----BEGIN PRIVATE KEY-----\nMIIE\n", 0},
		{"a\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----", len("a\n")},
		{"a\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIV", len("a\n")},
		{"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\nafter", len("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n")},
		{long + "tail", len(long)},
		// A long line is not cut between a lead-in and its secret.
		{long + "curl -H 'Authorization: Bearer ", len(long + "curl ")},
		{long + "DB_PASSWORD = ", len(long)},
		{long + "curl -u ", len(long + "curl ")},
		{long + "mysql -p ", len(long + "mysql ")},
		{long + "sshpass -p ", len(long)},
		{long + "tool --api-token ", len(long + "tool ")},
		// SSH2 key blocks are held like PEM ones.
		{"a\n---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nAAAA\n", len("a\n")},
		{"a\n---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nAAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n", len("a\n---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nAAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n")},
		// A name whose value comes on the next line waits for it.
		{"intro\napi_key =\n", len("intro\n")},
		{"intro\n<apiToken>\n", len("intro\n")},
		{"intro\npassword:\n", len("intro\n")},
		{"intro\napi_key =\nabc123\n", len("intro\napi_key =\nabc123\n")},
		{"a ratio: 3\n", len("a ratio: 3\n")},
		{"Here is what I found:\n", len("Here is what I found:\n")},
		{"export DB_PASSWORD=\n", 0},
		{strings.Repeat("x", lineHold), 0},
		{strings.Repeat("x", keyHold), keyHold},
	} {
		if got := safeCut(c.in); got != c.want {
			t.Errorf("safeCut(%.40q…) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestRedactKeepsContext covers the credentials that need context to be
// told from code, and what of their context the reader keeps.
func TestRedactKeepsContext(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", Redacted},
		{`{"text":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"}`, `{"text":"` + Redacted + `"}`},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = " + Redacted},
		{"export ANTHROPIC_API_KEY=sk-ant-short123", "export ANTHROPIC_API_KEY=" + Redacted},
		{`DB_PASSWORD="hunter2hunter2"`, `DB_PASSWORD="` + Redacted + `"`},
		{"postgres://admin:SuperSecretPassw0rd@db.example.com:5432/app", "postgres://admin:" + Redacted + "@db.example.com:5432/app"},
		{"Authorization: Basic YWRtaW46cGFzc3dvcmQxMjM=", "Authorization: Basic " + Redacted},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", "Authorization: Bearer " + Redacted},
		// Code and prose stay as they are.
		{"token := getToken(ctx)", "token := getToken(ctx)"},
		{"password = os.Getenv(\"DB_PASSWORD\")", "password = os.Getenv(\"DB_PASSWORD\")"},
		{"API_TOKEN=$(cat ~/.token) make deploy", "API_TOKEN=$(cat ~/.token) make deploy"},
		{"see https://example.com:8080/path and http://localhost:3000", "see https://example.com:8080/path and http://localhost:3000"},
		{"the basic functionality of the tokenizer", "the basic functionality of the tokenizer"},
		{"SECRET_NAME=short", "SECRET_NAME=short"},
		// The second round: secrets that start a line of JSON-encoded
		// text, after \n or \t or \u003c, where \b finds no boundary.
		{`{"text":"key:\nAKIAIOSFODNN7EXAMPLQ\nDB_PASSWORD=Sup3rS3cretPw\n\tghp_abcdefghijklmnopqrstuvwxyz0123456789\u003cAKIAIOSFODNN7EXAMPLE"}`,
			`{"text":"key:\n` + Redacted + `\nDB_PASSWORD=` + Redacted + `\n\t` + Redacted + `\u003c` + Redacted + `"}`},
		{`{"text":"Authorization: Basic dXNlcjpodW50ZXIyc2VjcmV0\nnext"}`, `{"text":"Authorization: Basic ` + Redacted + `\nnext"}`},
		{"export API_KEY=abcd1234efgh5678", "export API_KEY=" + Redacted},
		{`DB_PASSWORD = "Sup3rS3cretPw1"`, `DB_PASSWORD = "` + Redacted + `"`},
		{"DB_PASSWORD: Sup3rS3cretPw2", "DB_PASSWORD: " + Redacted},
		{`{\"DB_PASSWORD\": \"Sup3rS3cretPw3\"}`, `{\"DB_PASSWORD\": \"` + Redacted + `\"}`},
		{"mysql://root:p@ss@host/db", "mysql://root:" + Redacted + "@host/db"},
		// Not secrets.
		{"the task-runner-configuration-file and disk-usage-monitoring-tool-v2", "the task-runner-configuration-file and disk-usage-monitoring-tool-v2"},
		{"Private keys start with -----BEGIN RSA PRIVATE KEY----- and the rest of this sentence is prose.", "Private keys start with -----BEGIN RSA PRIVATE KEY----- and the rest of this sentence is prose."},
		{"The bearer authorization-header approach", "The bearer authorization-header approach"},
		{"MAX_TOKENS=1000000000 and CSRF_TOKEN_HEADER=X-CSRF-Token GITHUB_TOKEN_FILE=/run/secrets/gh", "MAX_TOKENS=1000000000 and CSRF_TOKEN_HEADER=X-CSRF-Token GITHUB_TOKEN_FILE=/run/secrets/gh"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestToolProgressIsNotPersisted: progress chunks are cut anywhere, so
// they stay live only; the finished event carries the output, redacted
// whole.
func TestToolProgressIsNotPersisted(t *testing.T) {
	t.Parallel()
	st := openTemp(t)
	ctx := context.Background()
	if err := st.CreateSession(ctx, "s", "/w", "r", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	key := "ghp_" + strings.Repeat("AbCdEfGhIj", 4)
	w := st.NewWriter()
	start := ev("s", 1, engine.EventToolCallStarted, "")
	start.ToolCallID, start.Tool = "c1", "bash"
	_ = w.Append(start)
	for i, chunk := range []string{"TOKEN: " + key[:12], key[12:] + "\n"} {
		p := ev("s", int64(2+i), engine.EventToolCallProgress, "")
		p.ToolCallID, p.Output = "c1", chunk
		_ = w.Append(p)
	}
	done := ev("s", 4, engine.EventToolCallFinished, "")
	done.ToolCallID, done.Output = "c1", "TOKEN: "+key
	_ = w.Append(done)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var types []string
	if err := st.Events(ctx, "s", func(e engine.Event) error {
		types = append(types, string(e.Type))
		if strings.Contains(e.Output, key[12:]) {
			t.Errorf("a piece of the key was stored in %s", e.Type)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(types, ",") != "tool_call_started,tool_call_finished" {
		t.Fatalf("stored %v", types)
	}
}
