package completion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ErrNoJSON is wrapped by ExtractJSON's error when an answer holds no JSON
// object kz can recover.
var ErrNoJSON = errors.New("no JSON object in the answer")

// fence is compiled on first use, so that every kz process does not pay
// for it at start.
var fence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \t]*\r?\n(.*?)```") })

// ExtractJSON recovers one JSON object from a model's answer, in order: the
// whole answer; a fenced code block; the first balanced {…} span; then a
// light repair of that span or of a truncated tail (trailing commas
// removed, open strings and brackets closed). It never guesses beyond that:
// anything else is a clear error.
func ExtractJSON(text string) (json.RawMessage, error) {
	t := strings.TrimSpace(text)
	if obj, ok := asObject(t); ok {
		return obj, nil
	}
	for _, m := range fence().FindAllStringSubmatch(t, -1) {
		if obj, ok := asObject(strings.TrimSpace(m[1])); ok {
			return obj, nil
		}
	}
	start := strings.IndexByte(t, '{')
	if start < 0 {
		return nil, fmt.Errorf("%w (%d characters, no '{')", ErrNoJSON, len(t))
	}
	span, complete := balanced(t[start:])
	if complete {
		if obj, ok := asObject(span); ok {
			return obj, nil
		}
	}
	if obj, ok := asObject(repair(span)); ok {
		return obj, nil
	}
	return nil, fmt.Errorf("%w: the object starting %q does not parse, even after repair", ErrNoJSON, clip(t[start:], 60))
}

// CheckRequired verifies that obj has the top-level properties a JSON schema
// lists as required: the light validation kz does itself (the patch package
// validates proposals fully). A required property the schema lets be null
// may be missing: a schema written for strict structured output lists every
// property as required, nullable when it may not apply, and a provider that
// does not enforce the schema leaves such a property out where a strict one
// writes null; both mean the same.
func CheckRequired(obj json.RawMessage, schema json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	var missing []string
	for _, k := range s.Required {
		if _, ok := m[k]; !ok && !nullable(s.Properties[k].Type) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the JSON answer lacks required field(s) %s", strings.Join(missing, ", "))
	}
	return nil
}

// nullable reports whether a schema "type" (a name or a list of names)
// admits null.
func nullable(typ json.RawMessage) bool {
	var one string
	if json.Unmarshal(typ, &one) == nil {
		return one == "null"
	}
	var many []string
	return json.Unmarshal(typ, &many) == nil && slices.Contains(many, "null")
}

func asObject(s string) (json.RawMessage, bool) {
	if !strings.HasPrefix(s, "{") {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// balanced returns the prefix of s (which starts with '{') up to its
// matching '}', or all of s and false when it never closes.
func balanced(s string) (string, bool) {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return s[:i+1], true
			}
		}
	}
	return s, false
}

// trailingComma is compiled on first use, so that every kz process does not pay
// for it at start.
var trailingComma = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`,(\s*[}\]])`) })

// repair closes what a truncated answer left open and drops trailing commas.
func repair(s string) string {
	var stack []byte
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			stack = append(stack, '}')
		case c == '[':
			stack = append(stack, ']')
		case (c == '}' || c == ']') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	var b strings.Builder
	b.WriteString(s)
	if esc {
		b.WriteByte('\\')
	}
	if inStr {
		b.WriteByte('"')
	}
	out := strings.TrimRight(b.String(), " \t\r\n")
	out = strings.TrimSuffix(out, ",")
	out = strings.TrimSuffix(out, ":")
	for i := len(stack) - 1; i >= 0; i-- {
		out += string(stack[i])
	}
	return trailingComma().ReplaceAllString(out, "$1")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
