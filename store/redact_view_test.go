package store

import (
	"encoding/json"
	"testing"
)

// TestTextViewDecodesJSONAndMapsBack: the view of a JSON-encoded string is
// the string itself, and every view position maps back to a whole escape
// of the raw text.
func TestTextViewDecodesJSONAndMapsBack(t *testing.T) {
	t.Parallel()
	for _, plain := range []string{
		"line one\nAKIA\tkey \"quoted\" back\\slash <tag> & é 😀 \u2028 end",
		"no escapes at all",
		"\n\n\"\"\\\\",
	} {
		raw, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		tv := newTextView(string(raw))
		if want := `"` + plain + `"`; tv.text != want {
			t.Fatalf("view %q, want %q", tv.text, want)
		}
		for v := 0; v <= len(tv.text); v++ {
			a, b := tv.rawStart(v), tv.rawEnd(v)
			if a > b || a < 0 || b > len(tv.raw) {
				t.Fatalf("%q: view %d maps to %d..%d", raw, v, a, b)
			}
			// A raw position a view position maps to is never inside an
			// escape: decoding from there gives the rest of the view.
			if v < len(tv.text) {
				var rest string
				if err := json.Unmarshal([]byte(`"`+tv.raw[a:len(tv.raw)-1]+`"`), &rest); err != nil && a > 0 {
					t.Fatalf("%q: raw %d (view %d) is inside an escape: %v", raw, a, v, err)
				}
			}
		}
	}
	// A backslash that starts no valid escape is kept.
	if tv := newTextView(`a\qb\u12`); tv.text != `a\qb\u12` {
		t.Fatalf("invalid escapes changed: %q", tv.text)
	}
}
