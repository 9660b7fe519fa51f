package store

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// kzRule is one of kz's own rules: what gitleaks' rule set does not
// cover, or covers only in a form too narrow for a transcript, where a
// secret is typed on a command line, printed by a tool from a config
// file, or streamed by a model.
type kzRule struct {
	id    string
	regex string
	// keywords must include, for each literal the expression can start
	// its keyword part with, a prefix of it (see secretRule.analyze).
	keywords []string
	// allowSecret and allowMatch are regexes that say a finding is not a
	// secret, tried on the secret and on the whole match.
	allowSecret, allowMatch []string
}

// jsonStart lets a token rule start after a JSON escape as well as at a
// word boundary: text encoded twice (JSON inside a JSON string) still
// shows \n before a key that starts a line after one decoding.
const jsonStart = `(?:\\[nrtbf]|\\u[0-9a-fA-F]{4}|\b)`

// placeholder is a value that stands for a secret rather than being one:
// a variable, a template, a mask or a word of documentation.
const placeholder = `(?i)^(?:true|false|null|nil|none|undefined|changeme|required|optional|\*+|x+|\.+|<.*|\[[^\]]*\]|\{\{.*\}\}|\$\{?[A-Za-z_][A-Za-z0-9_.]*\}?|%\(?[a-z_]*\)?[sdv]|your[_-].*)$`

// codeValue is a value in an assignment that is code, not a literal: a
// dotted name (settings.API_KEY), a snake_case or camelCase identifier,
// a type (password: str).
const codeValue = `^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z]\w*|(?i:str|string|int|bool|boolean|number|bytes|secretstr|object|any)[;,]?)$`

// flagWords are words that follow a flag in prose ("use --token with
// the CLI"), not a secret.
const flagWords = `(?i)^(?:to|with|and|or|the|a|an|is|if|when|flag|option|options|for|in|on|from|as|it|this|that|argument|parameter|value|instead|here|set|must|should|can|will)$`

// kzRuleSpecs are kz's own rules. Every rule's secret is its first group
// that matched something: only the secret is replaced.
var kzRuleSpecs = []kzRule{
	// Vendor tokens in the forms kz has always redacted, broader than
	// gitleaks' (which wants an exact length, or leaves out AWS's
	// documentation key, which kz redacts all the same).
	{id: "kz-anthropic-key", regex: jsonStart + `(sk-ant-[A-Za-z0-9_\-]{16,})`, keywords: []string{"sk-ant-"}},
	{id: "kz-openai-key", regex: jsonStart + `(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})`, keywords: []string{"sk-"},
		// A kebab-case word is not a key: a key holds digits.
		allowSecret: []string{`^[^0-9]*$`}},
	{id: "kz-aws-access-key", regex: jsonStart + `((?:AKIA|ASIA)[0-9A-Z]{16})\b`, keywords: []string{"akia", "asia"}},
	{id: "kz-aws-secret-key", regex: `(?i:aws_?secret_?access_?key|secret_?access_?key)(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([A-Za-z0-9/+=]{40})`,
		keywords: []string{"aws_secret", "awssecret", "secret_access", "secretaccess"}},
	{id: "kz-github-token", regex: jsonStart + `(gh[pousr]_[A-Za-z0-9]{30,})`, keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}},
	{id: "kz-github-pat", regex: jsonStart + `(github_pat_[A-Za-z0-9_]{30,})`, keywords: []string{"github_pat_"}},
	{id: "kz-gitlab-pat", regex: jsonStart + `(glpat-[A-Za-z0-9_\-]{20,})`, keywords: []string{"glpat-"}},
	{id: "kz-slack-token", regex: jsonStart + `(xox[abposr]-[0-9][A-Za-z0-9\-]{9,})`, keywords: []string{"xox"}},
	{id: "kz-google-api-key", regex: jsonStart + `(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)`, keywords: []string{"aiza"}},
	{id: "kz-google-oauth-token", regex: jsonStart + `(ya29\.[0-9A-Za-z_\-]{20,})`, keywords: []string{"ya29."}},
	{id: "kz-google-refresh-token", regex: `(?:^|[^0-9A-Za-z])(1//0[0-9A-Za-z_\-]{40,})`, keywords: []string{"1//0"}},
	{id: "kz-stripe-key", regex: jsonStart + `([rs]k_live_[A-Za-z0-9]{20,})`, keywords: []string{"rk_live_", "sk_live_"}},
	{id: "kz-huggingface-token", regex: jsonStart + `(hf_[A-Za-z0-9]{30,})`, keywords: []string{"hf_"},
		// An identifier (hf_requiredCharacteristicTypes) is not a token.
		allowSecret: []string{`^[^0-9]*$`}},
	{id: "kz-npm-token", regex: jsonStart + `(npm_[A-Za-z0-9]{36})`, keywords: []string{"npm_"}},
	{id: "kz-jwt", regex: jsonStart + `(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})`, keywords: []string{"eyj"}},
	// Azure storage and service bus connection strings, and the
	// signature of a shared access URL.
	{id: "kz-azure-account-key", regex: `(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*([A-Za-z0-9+/]{20,}={0,2})`, keywords: []string{"accountkey", "sharedaccesskey"}},
	{id: "kz-azure-sas-signature", regex: `[?&]sig=([A-Za-z0-9%+/=]{20,})`, keywords: []string{"sig="}},

	// Authorization headers: the scheme stays, the credential goes.
	{id: "kz-bearer", regex: `(?i)\bbearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)`, keywords: []string{"bearer"},
		// "the bearer authorization-header approach" is prose.
		allowSecret: []string{`^[^0-9]*$`}},
	{id: "kz-authorization-header", regex: `(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?(?:(?:basic|bearer|token|api-token|apikey|api-key|sso-key|key)[ \t]+)?([\w=~@.+/\-]{8,})`,
		keywords: []string{"authorization"}, allowSecret: []string{placeholder}},
	{id: "kz-api-key-header", regex: `(?i)(?:^|[\s"'{,])(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|ocp-apim-subscription-key|x-functions-key)["']?[ \t]*:[ \t]*["']?([\w=~@.+/\-]{12,})`,
		keywords:    []string{"x-api-key", "api-key", "x-auth-token", "x-access-token", "private-token", "x-goog-api-key", "ocp-apim-subscription-key", "x-functions-key"},
		allowSecret: []string{`^[A-Za-z_.-]+$`, placeholder}},
	// A header given to a command (curl -H, wget --header, http):
	// Token:, Api-Key:, X-Vendor-ApiKey: and the like.
	{id: "kz-curl-header", regex: `(?i)(?:-H|--header)(?:=|[ \t]{0,5})["']?(?:x-(?:[a-z]+-)?)?(?:api-?)?(?:key|token)[ \t]*:[ \t]{0,5}([\w=~@.+/\-]{8,})`,
		keywords: []string{"-h", "--header"}, allowSecret: []string{`^[A-Za-z_.-]+$`, placeholder}},

	// NAME=value and NAME: value for environment-style names such as
	// PGPASSWORD, DB_PASSWORD, MYSQL_PWD, GITHUB_TOKEN, API_KEY.
	{id: "kz-env-secret", regex: jsonStart + `[A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|_PWD|PASSPHRASE|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|AUTH_KEY|CREDENTIALS|CREDENTIAL)[A-Z0-9_]{0,40}(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([^\s"'\\$\x60]{3,})`,
		keywords: []string{"password", "passwd", "_pwd", "passphrase", "secret", "token", "api_key", "apikey", "access_key", "private_key", "auth_key", "credential"},
		// A count (MAX_TOKENS=), or where or how the secret is found
		// (GITHUB_TOKEN_FILE=, CSRF_TOKEN_HEADER=) is not a secret.
		allowMatch:  []string{`^\W*(?:\\[nrtbf]|\\u[0-9a-fA-F]{4})?[A-Z0-9_]*(?:TOKENS|_HEADER|_NAME|_FILE|_PATH|_URL|_URI|_ENV|_VAR|_TYPE|_LENGTH|_TTL|_ID|_COUNT|_LIMIT|_SIZE|_DIR)(?:\\?["'])?[ \t]*[=:]`},
		allowSecret: []string{`^[0-9]+$`, placeholder}},
	// "password": "…", password = '…', apiKey: "…" in JSON, YAML, TOML,
	// INI and code: a quoted literal assigned to a name that ends with a
	// secret's word.
	{id: "kz-config-secret-quoted", regex: `(?i)[\w.-]{0,40}(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|credentials|credential)["']?[ \t]*(?:=|:|:=|=>)[ \t]*(?:"([^"\n]{3,})"|'([^'\n]{3,})')`,
		keywords:    configWords,
		allowMatch:  []string{`(?i)(?:csrf|xsrf|page|next|continuation|sync|cursor)[_.-]?token["']?[ \t]*[:=]`},
		allowSecret: []string{placeholder, codeValue, `^(?:-----BEGIN|\s)`}},
	// password: hunter2 in YAML, password = hunter2 in INI, SECRET=x in
	// .env: a bare value that runs to the end of its line.
	{id: "kz-config-secret-bare", regex: `(?im)^[ \t]{0,16}(?:-[ \t]{1,4})?(?:export[ \t]{1,4})?["']?[\w.-]{0,40}(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|credentials|credential)["']?[ \t]*[:=][ \t]*([^\s'"#&*!|>{\[$<(][^\s'"#()]*)[ \t]*(?:#.*)?\r?$`,
		keywords:    configWords,
		allowMatch:  []string{`(?i)(?:csrf|xsrf|page|next|continuation|sync|cursor)[_.-]?token["']?[ \t]*[:=]`},
		allowSecret: []string{placeholder, codeValue, `^[0-9]{1,6}$`}},

	// Credentials on command lines.
	{id: "kz-cli-user-password", regex: `(?:^|[\s;|&(])(?:-u|--user|--proxy-user)(?:[ \t]+|=)?(?:` +
		// 'user:pass', "user:pass", ':pass' (no user)
		`'[^'\n:<>]*:([^'\n<>]+)'|"[^"\n:<>]*:([^"\n<>]+)"|` +
		// 'token:', "token:" (a token as the user, no password)
		`'([^'\s:<>]{3,}):'|"([^"\s:<>]{3,}):"|` +
		// "user":"pass", 'user':'pass', user:'pass', user:"pass"
		`"[^"\n]*":"([^"\n]+)"|'[^'\n]*':'([^'\n]+)'|[^\s'":<>]+:'([^'\n]+)'|[^\s'":<>]+:"([^"\n]+)"|` +
		// user:pass, token:
		`[^\s'":<>]+:([^\s'"<>]+)|([^\s'":<>]{3,}):(?:\s|$))`,
		keywords: []string{"-u", "--user", "--proxy-user"},
		// A uid:gid pair, a variable, a host:path.
		allowSecret: []string{`^[0-9]+$`, `^[$/~.]`, placeholder}},
	{id: "kz-mysql-password", regex: `\b(?:mysql|mariadb)[a-z-]*\b[^\n|;&]{0,200}?[ \t]-p(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"]+))`,
		keywords: []string{"mysql", "mariadb"}, allowSecret: []string{`^\$`}},
	{id: "kz-sshpass", regex: `\bsshpass\b[^\n|;&]{0,100}?[ \t]-p[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"]+))`,
		keywords: []string{"sshpass"}, allowSecret: []string{`^\$`}},
	{id: "kz-password-flag", regex: `(?i)(?:^|[\s'"=])--?(?:[a-z0-9]{1,20}-){0,4}(?:password|passwd|passphrase|pwd|secret|token|api-key|apikey|api_key|auth-token|access-token|client-secret)(?:=|[ \t]+)(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"]+))`,
		keywords: []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "api-key", "apikey", "api_key", "auth-token", "access-token", "client-secret"},
		// Another flag, a variable, a docker build secret's id, prose.
		allowSecret: []string{`^-`, `^(?:id|src|env)=`, flagWords, placeholder}},
	{id: "kz-openssl-pass", regex: `(?:^|\s)-pass(?:in|out)?[ \t]+pass:(\S+)`, keywords: []string{"-pass"}},
}

var configWords = []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "api_key", "api-key", "apikey",
	"access_key", "access-key", "accesskey", "private_key", "private-key", "privatekey", "auth_key", "auth-key", "authkey", "credential"}

// kzRules compiles kz's own rules, its two scanners included.
func kzRules() ([]*secretRule, error) {
	var rules []*secretRule
	for _, k := range kzRuleSpecs {
		r := &secretRule{id: k.id, expr: k.regex, keywords: k.keywords}
		for _, target := range []struct {
			target string
			res    []string
		}{{"", k.allowSecret}, {"match", k.allowMatch}} {
			for _, a := range target.res {
				r.allow = append(r.allow, newAllowlist(gitleaksAllowlist{RegexTarget: target.target, Regexes: []string{a}}))
			}
		}
		if err := r.setPlan(); err != nil {
			return nil, err
		}
		if r.plan.heads == nil || r.plan.gated {
			// kz's rules are written so that each runs only around its
			// keywords; one that does not is a mistake in the rule.
			return nil, fmt.Errorf("kz rule %s: no literal starting with a keyword to anchor it", k.id)
		}
		rules = append(rules, r)
	}
	rules = append(rules,
		&secretRule{id: "kz-private-key-block", keywords: []string{"-----begin", "---- begin"}, scan: scanKeyBlocks},
		&secretRule{id: "kz-url-password", keywords: []string{"://"}, scan: scanURLPasswords},
	)
	return rules, nil
}

// keyHeader is the first line of a private key block of any kind: RSA,
// EC, DSA, OPENSSH, PGP ("PGP PRIVATE KEY BLOCK"), ENCRYPTED and PKCS#8
// ("PRIVATE KEY"), and the SSH2 format's "---- BEGIN … ----". Both
// expressions are compiled on first use, with the redactor: their bounded
// repetition compiles to some 80 KB each, which every start of kz (kz
// version too) would otherwise pay.
var keyHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i)-{4,5} ?BEGIN ([A-Z0-9 _-]{0,60}PRIVATE KEY(?: BLOCK)?) ?-{4,5}`)
})

var keyFooter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i)-{4,5} ?END ([A-Z0-9 _-]{0,60}PRIVATE KEY(?: BLOCK)?) ?-{4,5}`)
})

// maxKeyBlock bounds how far a block's END line is looked for: the
// largest PGP keys with their subkeys stay well below it.
const maxKeyBlock = 64 << 10

// scanKeyBlocks redacts private key blocks whole, header to footer. A
// block whose footer is missing (output cut short, a key being streamed)
// is redacted up to the end of its last line of key material; a header
// followed by prose is not a key.
//
// Each byte is searched for a footer at most once, however many headers
// there are: ends caches the next footer after the last search.
func scanKeyBlocks(v string, starts []int, add func(int, int)) {
	covered := 0
	end := -2 // the next "END" marker at or after searchedFrom, -1 if none
	searchedFrom := 0
	for _, p := range starts {
		if p < covered {
			continue
		}
		m := keyHeader().FindStringSubmatchIndex(v[p:min(len(v), p+128)])
		if m == nil {
			continue
		}
		label, h := v[p+m[2]:p+m[3]], p+m[1]
		if end == -2 || (end >= 0 && end < h) {
			searchedFrom = max(h, searchedFrom)
			end = indexFooter(v, searchedFrom)
			if end >= 0 {
				searchedFrom = end
			}
		}
		e := keyMaterialEnd(v, h)
		if e == h {
			// No key material: a header in prose, or a block around a
			// placeholder ("…PRIVATE KEY-----\nanything\n-----END…").
			continue
		}
		if end >= 0 && end-h <= maxKeyBlock {
			if f := keyFooter().FindStringSubmatchIndex(v[end:min(len(v), end+128)]); f != nil && strings.EqualFold(v[end+f[2]:end+f[3]], label) {
				add(p, end+f[1])
				covered = end + f[1]
				continue
			}
		}
		if e > h {
			add(p, e)
			covered = e
		}
	}
}

// indexFooter is the position of the next footer-like marker at or after
// i, or -1.
func indexFooter(v string, i int) int {
	for i < len(v) {
		j := strings.Index(v[i:], "END ")
		if j < 0 {
			return -1
		}
		k := i + j
		if k >= 5 && v[k-5:k] == "-----" || k >= 5 && v[k-5:k] == "---- " {
			return k - 5
		}
		i = k + 4
	}
	return -1
}

// keyMaterialEnd is where the key material after a header ending at h
// ends: armor headers (Proc-Type:, DEK-Info:, Version:, Comment:) and
// blank lines, then lines of base64. It is h when no base64 follows. A
// line break may be a real one or, in text encoded twice, \n.
func keyMaterialEnd(v string, h int) int {
	end, seenData := h, false
	i := h
	for i < len(v) && i-h <= maxKeyBlock {
		// Line breaks and blanks.
		if c := v[i]; c == '\n' || c == '\r' || c == ' ' || c == '\t' {
			i++
			continue
		}
		if v[i] == '\\' && i+1 < len(v) && (v[i+1] == 'n' || v[i+1] == 'r') {
			i += 2
			continue
		}
		j := i
		for j < len(v) && isBase64Byte(v[j]) {
			j++
		}
		atBreak := j == len(v) || strings.IndexByte("\n\r\\-\"'` \t", v[j]) >= 0
		switch {
		case atBreak && (j-i >= 16 || j == len(v) || v[j-1] == '=' || v[i] == '='):
			end, seenData = j, true
			i = j
		case !seenData && j < len(v) && v[j] == ':' && j > i:
			// An armor header: skip its line.
			for i = j; i < len(v) && v[i] != '\n' && !(v[i] == '\\' && i+1 < len(v) && v[i+1] == 'n'); i++ {
			}
		default:
			return end
		}
	}
	return end
}

func isBase64Byte(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '='
}

// urlStop are the bytes that end a URL's authority.
var urlStop = func() (t [256]bool) {
	for _, c := range []byte("/?#\\\"'<>` \t\r\n") {
		t[c] = true
	}
	return t
}()

// scanURLPasswords redacts the password of user:password@ in URLs (a
// password may hold an @: the last one ends it). starts are where "://"
// occurs; the scheme before it and the authority after it are bounded.
func scanURLPasswords(v string, starts []int, add func(int, int)) {
	for _, p := range starts {
		s := p
		for s > 0 && p-s < 32 && isSchemeByte(v[s-1]) {
			s--
		}
		if s == p {
			continue
		}
		a := p + 3
		e := a
		for e < len(v) && e-a < 512 && !urlStop[v[e]] {
			e++
		}
		auth := v[a:e]
		at := strings.LastIndexByte(auth, '@')
		if at <= 0 {
			continue
		}
		colon := strings.IndexByte(auth[:at], ':')
		if colon <= 0 || colon+1 >= at {
			continue
		}
		add(a+colon+1, a+at)
	}
}

func isSchemeByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '+' || b == '.' || b == '-'
}
