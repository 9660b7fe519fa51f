package store

import (
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret in persisted text.
const Redacted = "[REDACTED]"

// secretPatterns match the credentials kz most often sees in transcripts:
// vendor API keys, bearer tokens, private key blocks and JWTs. Each needs a
// long enough body that ordinary words are not hit.
// It is compiled on first use, not at package init, which every kz
// process pays for, `kz version` included.
var secretPatterns = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(strings.Join([]string{
		`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`,
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
	}, "|"))
})

// triggers are substrings at least one of which every secret pattern
// contains. Checking them first keeps redaction nearly free for the great
// majority of text, which holds no secret.
var triggers = []string{
	"PRIVATE KEY", "sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox",
	"AIza", "k_live_", "hf_", "npm_", "eyJ", "earer", "EARER",
}

// Redact replaces secrets in s with [REDACTED]. It is applied to every
// string kz persists, once, in the store's write funnel.
func Redact(s string) string {
	if len(s) < 16 || !mayHoldSecret(s) {
		return s
	}
	return secretPatterns().ReplaceAllStringFunc(s, func(m string) string {
		if i := strings.Index(strings.ToLower(m), "bearer"); i == 0 {
			// Keep the scheme so the reader still sees what was there.
			j := strings.IndexAny(m[6:], " \t\r\n")
			if j >= 0 {
				return m[:6+j+1] + Redacted
			}
		}
		return Redacted
	})
}

func mayHoldSecret(s string) bool {
	for _, t := range triggers {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}
