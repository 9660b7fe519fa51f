package store

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestKeywordSetFindsEveryOccurrence compares the automaton with a plain
// search for each keyword, ignoring ASCII case, on random text over a
// small alphabet (so that keywords overlap and share prefixes and
// suffixes).
func TestKeywordSetFindsEveryOccurrence(t *testing.T) {
	t.Parallel()
	words := []string{"ab", "abc", "bca", "c", "key", "apikey", "-----begin", "://", "s.", "SK"}
	k := newKeywordSet(func() []string {
		var lower []string
		for _, w := range words {
			lower = append(lower, strings.ToLower(w))
		}
		return lower
	}())
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "abcABCkeyKEYpis.:/- -----BEGIN"
	for range 200 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		type hit struct{ word, end int }
		var got, want []hit
		k.scan(s, func(w, end int) { got = append(got, hit{w, end}) })
		lower := strings.ToLower(s)
		for wi, w := range words {
			w = strings.ToLower(w)
			for i := 0; i+len(w) <= len(lower); i++ {
				if lower[i:i+len(w)] == w {
					want = append(want, hit{wi, i + len(w)})
				}
			}
		}
		order := func(a, b hit) int {
			if a.end != b.end {
				return a.end - b.end
			}
			return a.word - b.word
		}
		slices.SortFunc(got, order)
		slices.SortFunc(want, order)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: got %v, want %v", s, got, want)
		}
		if k.any(s) != (len(want) > 0) {
			t.Fatalf("%q: any says %v", s, k.any(s))
		}
	}
}
