package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file makes untrusted text safe to put on a terminal. Everything a
// runtime sends (assistant text, tool output, commands, paths) may hold
// escape sequences that would move the cursor, erase the line or rewrite the
// screen, and Unicode that reorders or hides what the person reads. A
// permission prompt that can be forged is worse than none, so:
//
//   - sanitize (used for the transcript) replaces control characters with
//     visible pictures and keeps newlines and tabs;
//   - escapeCommand (used for permission requests) renders every control,
//     bidi and zero-width character as an explicit, styled marker and
//     collapses long runs of blanks, so nothing can hide the tail of a
//     command off-screen.

// segment is a piece of escaped text; marked pieces are shown in the
// theme's Escaped style so they stand out from the literal text.
type segment struct {
	text   string
	marked bool
}

// minSpaceRun is the shortest run of blanks shown as a count instead of
// literally: long enough for ordinary alignment, short enough that padding
// cannot push the rest of a command off the dialog.
const minSpaceRun = 8

// bidiNames names the Unicode bidirectional formatting characters, which
// can make a terminal display text in another order than it executes
// (CVE-2021-42574, "Trojan Source").
var bidiNames = map[rune]string{
	'\u061C': "ALM", '\u200E': "LRM", '\u200F': "RLM",
	'\u202A': "LRE", '\u202B': "RLE", '\u202C': "PDF", '\u202D': "LRO", '\u202E': "RLO",
	'\u2066': "LRI", '\u2067': "RLI", '\u2068': "FSI", '\u2069': "PDI",
}

// invisibleNames names characters that take no room on screen.
var invisibleNames = map[rune]string{
	'\u00AD': "SHY", '\u180E': "MVS", '\u200B': "ZWSP", '\u200C': "ZWNJ", '\u200D': "ZWJ",
	'\u2060': "WJ", '\u2061': "FA", '\u2062': "IT", '\u2063': "IS", '\u2064': "IP", '\uFEFF': "BOM",
}

// escapeReport says what escapeCommand found, for the dialog's warning.
type escapeReport struct {
	controls, bidi, invisible, spaceRuns int
}

func (r escapeReport) any() bool { return r.controls+r.bidi+r.invisible+r.spaceRuns > 0 }

// summary is the dialog's warning line, or "" when the text was plain.
func (r escapeReport) summary() string {
	var parts []string
	if r.controls > 0 {
		parts = append(parts, plural(r.controls, "control character"))
	}
	if r.bidi > 0 {
		parts = append(parts, plural(r.bidi, "bidirectional override"))
	}
	if r.invisible > 0 {
		parts = append(parts, plural(r.invisible, "invisible character"))
	}
	if r.spaceRuns > 0 {
		parts = append(parts, plural(r.spaceRuns, "long run")+" of blanks")
	}
	if len(parts) == 0 {
		return ""
	}
	return "contains " + strings.Join(parts, ", ") + " (shown marked)"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// escapeCommand splits s into lines of segments. Newlines end a line (and
// are kept visible with a marker when they are not the last character), so
// the structure of a multi-line script stays readable.
func escapeCommand(s string) ([][]segment, escapeReport) {
	var rep escapeReport
	var lines [][]segment
	var cur []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			cur = append(cur, segment{text: lit.String()})
			lit.Reset()
		}
	}
	mark := func(t string) {
		flush()
		cur = append(cur, segment{text: t, marked: true})
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			rep.controls++
			mark(fmt.Sprintf(`\x%02x`, s[i]))
		case r == '\n':
			if i+size < len(s) {
				mark(`\n`)
			}
			flush()
			lines = append(lines, cur)
			cur = nil
		case r == ' ' || r == '\t':
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			run := s[i:j]
			if j-i >= minSpaceRun {
				rep.spaceRuns++
				mark(fmt.Sprintf("⟨%d blanks⟩", j-i))
			} else {
				for _, c := range run {
					if c == '\t' {
						mark(`\t`)
					} else {
						lit.WriteRune(c)
					}
				}
			}
			i = j
			continue
		case r < 0x20 || r == 0x7f:
			rep.controls++
			mark(controlName(r))
		case r >= 0x80 && r < 0xa0:
			rep.controls++
			mark(fmt.Sprintf(`\u%04X`, r))
		case bidiNames[r] != "":
			rep.bidi++
			mark(fmt.Sprintf("⟨U+%04X %s⟩", r, bidiNames[r]))
		case invisibleNames[r] != "":
			rep.invisible++
			mark(fmt.Sprintf("⟨U+%04X %s⟩", r, invisibleNames[r]))
		case !unicode.IsPrint(r) && !unicode.IsSpace(r):
			rep.invisible++
			mark(fmt.Sprintf("⟨U+%04X⟩", r))
		case unicode.IsSpace(r):
			// Unusual blanks (no-break, em space...) look like a space but
			// are not one to a shell.
			rep.invisible++
			mark(fmt.Sprintf("⟨U+%04X⟩", r))
		default:
			lit.WriteRune(r)
		}
		i += size
	}
	flush()
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines, rep
}

// controlName spells a C0 control character the way a shell programmer
// would write it.
func controlName(r rune) string {
	switch r {
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\v':
		return `\v`
	case 0x1b:
		return `\x1b`
	}
	return fmt.Sprintf(`\x%02x`, r)
}

// sanitize makes untrusted text inert for the transcript: control
// characters other than newline and tab become their Unicode control
// pictures (ESC shows as ␛), carriage returns are dropped when they end a
// line and pictured otherwise, and bidi overrides are pictured too, so
// text cannot rewrite the screen or reorder itself.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if needsSanitizing(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// Windows line endings are harmless: drop the CR.
		case r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case r >= 0x80 && r < 0xa0:
			b.WriteRune('\uFFFD')
		case bidiNames[r] != "":
			fmt.Fprintf(&b, "⟨%s⟩", bidiNames[r])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsSanitizing(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError || bidiNames[r] != ""
}

// oneLine squeezes text into one sanitized line for headers and summaries.
func oneLine(s string) string {
	s = sanitize(s)
	s = strings.ReplaceAll(s, "\t", " ")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimRight(s[:i], " ") + " …"
	}
	return s
}
