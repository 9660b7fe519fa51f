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
// Persisted text is JSON, so no pattern may match a quote or a backslash
// that the JSON needs, except inside a complete key block.
// It is compiled on first use, not at package init, which every kz
// process pays for, `kz version` included.
var secretPatterns = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(strings.Join([]string{
		`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\:,\-]*)`,
		`sk-ant-[A-Za-z0-9_\-]{16,}`,
		`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`,
		`\bAKIA[0-9A-Z]{16}\b`,
		`\bASIA[0-9A-Z]{16}\b`,
		`\bgh[pousr]_[A-Za-z0-9]{30,}`,
		`\bgithub_pat_[A-Za-z0-9_]{30,}`,
		`\bglpat-[A-Za-z0-9_\-]{20,}`,
		`\bxox[abposr]-[A-Za-z0-9\-]{10,}`,
		`\bAIza[0-9A-Za-z_\-]{35}`,
		`\b[rs]k_live_[A-Za-z0-9]{20,}`,
		`\bhf_[A-Za-z0-9]{30,}`,
		`\bnpm_[A-Za-z0-9]{36}`,
		`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`,
		`(?i:\bbearer\s+)[A-Za-z0-9._~+/\-]{16,}=*`,
		`(?i:\bauthorization:\s*basic\s+)[A-Za-z0-9+/]{8,}=*`,
		`(?i:\baws_secret_access_key)["']?\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}`,
		`\b[A-Z][A-Z0-9_]*(?:API_KEY|APIKEY|SECRET|TOKEN|PASSWORD|PASSWD|ACCESS_KEY)[A-Z0-9_]*=["']?[^\s"'\\$]{8,}`,
		`\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@"'\\]+:[^\s@/"'\\]+@`,
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
		return m[:keep] + Redacted + suffix
	})
}

// keepAround is how much of a match to keep before [REDACTED], and what to
// put after it, so the reader still sees what was there: the scheme of a
// bearer or basic credential, the variable a secret was assigned to, the
// user of a URL.
func keepAround(m string) (keep int, suffix string) {
	lower := strings.ToLower(m)
	switch {
	case strings.HasPrefix(lower, "bearer"), strings.HasPrefix(lower, "authorization"):
		return strings.LastIndexAny(m, " \t\r\n") + 1, ""
	case strings.HasPrefix(m, "-----BEGIN"):
		return 0, ""
	case strings.HasSuffix(m, "@") && strings.Contains(m, "://"):
		return strings.LastIndexByte(m, ':') + 1, "@"
	case strings.HasPrefix(lower, "aws_secret_access_key") || strings.ContainsRune(m, '='):
		// NAME=value or name = "value": keep the name, the sign and an
		// opening quote.
		i := strings.IndexAny(m, "=:")
		if i < 0 {
			return 0, ""
		}
		i++
		for i < len(m) && strings.IndexByte(" \t\"'", m[i]) >= 0 {
			i++
		}
		return i, ""
	}
	return 0, ""
}

func mayHoldSecret(s string) bool {
	for _, t := range triggers {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}
