package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// wordInfo describes what quote removal found in a word.
type wordInfo struct {
	// literal means the word's value is known without running anything.
	literal bool
	// glob means an unquoted glob or brace pattern the shell would expand.
	glob bool
}

// wordValue returns the word after quote removal. For a word that is not a
// literal it returns the source-like text and literal=false. `$HOME` and
// `${HOME}` at the start of a word are rendered as "~", which the gate
// expands, so that `rm -rf $HOME` is recognised.
func wordValue(w *syntax.Word) (string, wordInfo) {
	info := wordInfo{literal: true}
	if w == nil {
		return "", info
	}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				user, _, _ := strings.Cut(v[1:], "/")
				if user != "" {
					// ~user is another user's home: unknown here.
					info.literal = false
				}
			}
			if hasGlob(v) {
				info.glob = true
			}
			b.WriteString(unescapeUnquoted(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				v, ok := ansiC(p.Value)
				if !ok {
					info.literal = false
				}
				b.WriteString(v)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
					continue
				}
				info.literal = false
				b.WriteString("$?")
			}
		case *syntax.ParamExp:
			if i == 0 && isHomeParam(p) {
				b.WriteString("~")
				continue
			}
			info.literal = false
			b.WriteString("$")
			if p.Param != nil {
				b.WriteString(p.Param.Value)
			}
		case *syntax.ProcSubst:
			info.literal = false
			if len(w.Parts) == 1 {
				// The word is a pipe to commands analysed on their own.
				b.WriteString(ProcSubstPath)
				continue
			}
			b.WriteString("$?")
		default:
			info.literal = false
			b.WriteString("$?")
		}
	}
	return b.String(), info
}

// ProcSubstPath is the value of a word that is only a process
// substitution, <(cmd) or >(cmd): bash passes a pipe's /dev/fd path, not a
// file, and the commands behind it are analysed like any other.
const ProcSubstPath = "/dev/fd/<(...)>"

func isHomeParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "HOME" && !p.Excl && !p.Length && !p.Width &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.Names == 0
}

// hasGlob reports unquoted pattern characters: *, ?, [ and a brace
// expansion {a,b} or {1..3}.
func hasGlob(v string) bool {
	esc := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if esc {
			esc = false
			continue
		}
		switch c {
		case '\\':
			esc = true
		case '*', '?':
			return true
		case '[':
			// A bracket expression needs its closing bracket; a lone
			// `[` (the test command) is a literal.
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				return true
			}
		case '{':
			if j := strings.IndexByte(v[i:], '}'); j > 0 {
				inner := v[i+1 : i+j]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					return true
				}
			}
		}
	}
	return false
}

// unescapeUnquoted removes backslashes the way unquoted shell words do.
func unescapeUnquoted(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// unescapeDouble removes backslashes inside double quotes, where only
// \\ \$ \` \" and backslash-newline are escapes.
func unescapeDouble(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '\\', '$', '`', '"':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes a $'...' string. Escapes it does not know make the value
// unknown (ok=false) rather than guessed.
func ansiC(v string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch v[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(v[i])
		case 'x':
			n, k := 0, 0
			for k < 2 && i+1 < len(v) && isHex(v[i+1]) {
				i++
				n = n*16 + hexVal(v[i])
				k++
			}
			if k == 0 {
				return b.String(), false
			}
			b.WriteByte(byte(n))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := int(v[i] - '0')
			for k := 1; k < 3 && i+1 < len(v) && v[i+1] >= '0' && v[i+1] <= '7'; k++ {
				i++
				n = n*8 + int(v[i]-'0')
			}
			b.WriteByte(byte(n))
		default:
			return b.String(), false
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quoteWord renders a word for the normalised form of a command: bare when
// it holds only safe characters, single-quoted otherwise.
func quoteWord(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-_./:=@%+,^~", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// nestingDepth estimates the deepest nesting of s without parsing it:
// parentheses, braces, backticks and compound keywords. It over-counts
// (quotes are ignored), which only makes the gate ask more.
func nestingDepth(s string) int {
	depth, maxDepth := 0, 0
	inc := func() {
		depth++
		if depth > maxDepth {
			maxDepth = depth
		}
	}
	dec := func() {
		if depth > 0 {
			depth--
		}
	}
	wordStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '(', '{', '[':
			inc()
		case ')', '}', ']':
			dec()
		case '`':
			inc()
		}
		if wordStart && c >= 'a' && c <= 'z' {
			j := i
			for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
				j++
			}
			if j == len(s) || !isWordByte(s[j]) {
				switch s[i:j] {
				case "if", "case", "while", "until", "for", "select":
					inc()
				case "fi", "esac", "done":
					dec()
				}
			}
			i = j - 1
			wordStart = false
			continue
		}
		wordStart = !isWordByte(c)
	}
	return maxDepth
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// steeringPrefixes and steeringVars name variables that make programs
// load or run code, or read configuration, chosen by whoever sets them:
// interpreters' startup and library paths, pagers and editors, git's and
// the package managers' settings, the loader, locale and message files,
// and the files tools read their options from (RIPGREP_CONFIG_PATH,
// TAR_OPTIONS, GREP_OPTIONS, AWKPATH, LESSOPEN, EXINIT, ...).
var steeringPrefixes = []string{"GIT_", "LD_", "DYLD_", "npm_config_", "NPM_CONFIG_", "YARN_", "PNPM_", "BUN_",
	"DENO_", "COREPACK_", "PYTHON", "PIP_", "UV_", "PERL", "RUBY", "GEM_", "BUNDLE_", "NODE_", "BASH_FUNC_",
	"CARGO_", "RUSTC", "RUSTUP_", "RUSTFLAGS", "RUSTDOCFLAGS", "LESS", "GO", "CGO_", "AWK", "DOCKER_", "KUBE",
	"XDG_", "MAVEN_", "GRADLE_", "JAVA_", "SSH_", "GPG", "GNUPG", "SYSTEMD_", "GCONV_", "LOCPATH", "NLSPATH",
	"GLIBC_", "MALLOC_", "TERMINFO", "LUA_", "PHP", "R_", "HISTFILE", "INPUTRC", "VIM", "EMACS", "EXINIT",
	"MYVIMRC", "NVIM", "TAR_", "ZSTD_", "XZ_", "GZIP", "BZIP", "CURL_", "WGETRC", "http_proxy", "https_proxy",
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"}

// The map is built on first use, so that every kz process does not pay
// for it at start.
var steeringVars = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"PAGER": true, "MANPAGER": true, "MANOPT": true, "MANPATH": true, "EDITOR": true, "VISUAL": true,
		"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true, "PS4": true,
		"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "PATH": true, "HOME": true, "ZDOTDIR": true,
		"MAKEFLAGS": true, "MFLAGS": true, "MAKE": true, "MAKEFILES": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true,
		"BROWSER": true, "_JAVA_OPTIONS": true, "CLASSPATH": true, "CC": true, "CXX": true, "CPP": true, "LD": true,
		"AR": true, "AS": true, "CFLAGS": true, "CXXFLAGS": true, "CPPFLAGS": true, "LDFLAGS": true, "SHELL": true,
		"CDPATH": true, "GLOBIGNORE": true, "TMPDIR": true, "PROMPT": true, "FPATH": true, "RIPGREP_CONFIG_PATH": true,
		"GREP_OPTIONS": true, "POSIXLY_CORRECT": true, "HOSTALIASES": true, "RESOLV_HOST_CONF": true,
		"KUBECONFIG": true, "EXECIGNORE": true, "TZDIR": true,
		"SYSTEMD_EDITOR": true, "FZF_DEFAULT_COMMAND": true, "FZF_DEFAULT_OPTS": true, "BAT_PAGER": true,
		"DELTA_PAGER": true, "GH_PAGER": true, "GH_EDITOR": true, "SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
	}
})

// IsSteeringVar reports whether assigning the variable can make another
// program run code (or read files) chosen by the assigner.
func IsSteeringVar(name string) bool {
	if steeringVars()[name] {
		return true
	}
	for _, p := range steeringPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
