package proc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTail(t *testing.T) {
	t.Parallel()
	tb := NewTail(5)
	for _, s := range []string{"abc", "defg", "h"} {
		if n, err := tb.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if tb.String() != "defgh" {
		t.Errorf("tail %q", tb.String())
	}
}

func TestHeadTail(t *testing.T) {
	t.Parallel()
	b := NewHeadTail(3, 4)
	_, _ = b.Write([]byte("ab"))
	if b.String() != "ab" {
		t.Errorf("short output %q", b.String())
	}
	_, _ = b.Write([]byte("cdefghij"))
	_, _ = b.Write([]byte("k"))
	if got, want := b.String(), "abc\n… [4 bytes of output omitted] …\nhijk"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	if Clip("short", 10) != "short" || Clip("abcdef", 3) != "abc…" {
		t.Errorf("Clip: %q %q", Clip("short", 10), Clip("abcdef", 3))
	}
	// A cut inside a rune moves back to its start.
	got := Clip("aé€", 4)
	if got != "aé…" || !utf8.ValidString(got) {
		t.Errorf("Clip(%q, 4) = %q", "aé€", got)
	}
	if got := Clip(strings.Repeat("€", 3), 2); got != "…" {
		t.Errorf("Clip in the first rune = %q", got)
	}
}
