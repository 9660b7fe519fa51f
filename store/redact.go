package store

import (
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret in persisted text.
const Redacted = "[REDACTED]"

// secretPatterns match the credentials kz most often sees in transcripts:
// vendor API keys, bearer and basic credentials, private key blocks (a
// block cut short included), JWTs, passwords in URLs and secrets assigned
// to variables named like them. Each needs a long enough body, or a
// context, that ordinary words and code are not hit: a lowercase
// `token = getToken()` is code, `API_TOKEN=…` is a secret.
//
// Persisted text is mostly JSON, where a newline is the two characters \n
// and "<" is \u003c: a word boundary (\b) finds none between that n and a
// key that starts the next line. So each pattern starts at a boundary or
// right after such an escape (see start), which the replacement keeps. No
// pattern may match a quote or a backslash that the JSON needs, except
// inside a complete key block.
// It is compiled on first use, not at package init, which every kz
// process pays for, `kz version` included.
var secretPatterns = sync.OnceValue(func() *regexp.Regexp {
	const start = `(?:\\[nrtbf]|\\u[0-9a-fA-F]{4}|\b)`
	return regexp.MustCompile(strings.Join([]string{
		// A whole key block, or one cut short: its base64 lines (a line of
		// prose after the header is not a key).
		`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:(?:\s|\\[nr])+[A-Za-z0-9+/=]{20,})+(?:(?:\s|\\[nr])+[A-Za-z0-9+/]*={1,2})?)`,
		start + `sk-ant-[A-Za-z0-9_\-]{16,}`,
		start + `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`,
		start + `AKIA[0-9A-Z]{16}\b`,
		start + `ASIA[0-9A-Z]{16}\b`,
		start + `gh[pousr]_[A-Za-z0-9]{30,}`,
		start + `github_pat_[A-Za-z0-9_]{30,}`,
		start + `glpat-[A-Za-z0-9_\-]{20,}`,
		start + `xox[abposr]-[A-Za-z0-9\-]{10,}`,
		start + `AIza[0-9A-Za-z_\-]{35}`,
		start + `[rs]k_live_[A-Za-z0-9]{20,}`,
		start + `hf_[A-Za-z0-9]{30,}`,
		start + `npm_[A-Za-z0-9]{36}`,
		start + `eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`,
		`(?i:` + start + `bearer\s+)[A-Za-z0-9._~+/\-]{16,}=*`,
		`(?i:` + start + `authorization:\s*basic\s+)[A-Za-z0-9+/]{8,}=*`,
		`(?i:` + start + `aws_secret_access_key)(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?[A-Za-z0-9/+=]{40}`,
		// NAME=value, NAME: value, "NAME": "value" for names like
		// DB_PASSWORD, API_KEY, SECRET, GITHUB_TOKEN.
		start + `(?:[A-Z][A-Z0-9_]*_)?(?:API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?[^\s"'\\$]{8,}`,
		// The password of user:password@ in a URL (it may hold an @).
		start + `[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@"'\\]+:[^\s/"'\\]+@`,
	}, "|"))
})

// triggers are substrings at least one of which every secret pattern
// contains. Checking them first keeps redaction nearly free for the great
// majority of text, which holds no secret.
var triggers = []string{
	"PRIVATE KEY", "sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox",
	"AIza", "k_live_", "hf_", "npm_", "eyJ", "earer", "EARER", "uthorization", "UTHORIZATION", "ws_secret_access_key",
	"WS_SECRET_ACCESS_KEY", "API_KEY", "APIKEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "ACCESS_KEY", "://",
}

// Redact replaces secrets in s with [REDACTED]. It is applied to every
// string kz persists, once, in the store's write funnel.
func Redact(s string) string {
	if len(s) < 16 || !mayHoldSecret(s) {
		return s
	}
	return secretPatterns().ReplaceAllStringFunc(s, func(m string) string {
		keep, suffix := keepAround(m)
		if keep == len(m) {
			return m
		}
		return m[:keep] + Redacted + suffix
	})
}

// keepAround is how much of a match to keep before [REDACTED], and what
// to put after it, so the reader still sees what was there: a JSON escape
// the match started after, the scheme of a bearer or basic credential,
// the variable a secret was assigned to, the user of a URL. A match that
// is not a secret after all (a bearer "token" without a digit, a count
// such as MAX_TOKENS=, a number) is kept whole: keep is then len(m).
func keepAround(m string) (keep int, suffix string) {
	esc := 0
	if strings.HasPrefix(m, "\\u") {
		esc = 6
	} else if strings.HasPrefix(m, "\\") {
		esc = 2
	}
	rest := m[esc:]
	lower := strings.ToLower(rest)
	switch {
	case strings.HasPrefix(lower, "bearer"), strings.HasPrefix(lower, "authorization"):
		k := strings.LastIndexAny(rest, " \t\r\n") + 1
		if strings.HasPrefix(lower, "bearer") && !strings.ContainsAny(rest[k:], "0123456789") {
			// "the bearer authorization-header approach": prose.
			return len(m), ""
		}
		return esc + k, ""
	case strings.HasPrefix(rest, "-----BEGIN"):
		return 0, ""
	case strings.HasSuffix(rest, "@") && strings.Contains(rest, "://"):
		i := strings.Index(rest, "://") + 3
		return esc + i + strings.IndexByte(rest[i:], ':') + 1, "@"
	case strings.HasPrefix(lower, "aws_secret_access_key") || strings.ContainsAny(rest, "=:"):
		// NAME=value or "name": "value": keep the name, the sign and an
		// opening quote.
		i := strings.IndexAny(rest, "=:")
		name := strings.TrimRight(rest[:i], " \t\"'\\")
		i++
		for i < len(rest) && strings.IndexByte(" \t\"'\\", rest[i]) >= 0 {
			i++
		}
		if notSecretName(name) || strings.Trim(rest[i:], "0123456789") == "" {
			return len(m), ""
		}
		return esc + i, ""
	}
	return esc, ""
}

func mayHoldSecret(s string) bool {
	for _, t := range triggers {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// notSecretName says a variable named like a secret holds something else:
// a count (MAX_TOKENS), or where or how the secret is found
// (GITHUB_TOKEN_FILE, CSRF_TOKEN_HEADER).
func notSecretName(name string) bool {
	for _, suffix := range []string{"TOKENS", "_HEADER", "_NAME", "_FILE", "_PATH", "_URL", "_ENV", "_VAR", "_TYPE", "_LENGTH", "_TTL"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}
