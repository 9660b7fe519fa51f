package agentcli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
)

// lines is n numbered lines, with the ones in change replaced.
func lines(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if c, ok := change[i]; ok {
			b.WriteString(c + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// Every way a person can take part of one file's change resolves to the
// content that change would have with exactly that part: whole, none,
// each hunk alone, edited content, a file left out; a new file and a
// deleted one too.
func TestKeptContent(t *testing.T) {
	old := lines(30, nil)
	next := lines(30, map[int]string{2: "TWO", 15: "FIFTEEN", 29: "TWENTY-NINE"})
	fileDiff, _, _ := diff.Unified("a.txt", "a.txt", []byte(old), []byte(next))
	if n := len(diff.FileHunks(fileDiff)); n != 3 {
		t.Fatalf("%d hunks, want 3:\n%s", n, fileDiff)
	}
	sel := func(fs ...engine.FileSelection) *engine.PatchSelection { return &engine.PatchSelection{Files: fs} }
	for _, c := range []struct {
		name  string
		sel   *engine.PatchSelection
		whole bool
		want  string
	}{
		{"no selection", nil, true, ""},
		{"the file whole", sel(engine.FileSelection{Path: "a.txt"}), true, ""},
		{"first hunk", sel(engine.FileSelection{Path: "a.txt", Hunks: []int{0}}), false, lines(30, map[int]string{2: "TWO"})},
		{"middle hunk", sel(engine.FileSelection{Path: "a.txt", Hunks: []int{1}}), false, lines(30, map[int]string{15: "FIFTEEN"})},
		{"first and last", sel(engine.FileSelection{Path: "a.txt", Hunks: []int{0, 2}}), false, lines(30, map[int]string{2: "TWO", 29: "TWENTY-NINE"})},
		{"edited", sel(engine.FileSelection{Path: "a.txt", Content: []byte("mine\n")}), false, "mine\n"},
		{"file left out", sel(engine.FileSelection{Path: "b.txt"}), false, old},
	} {
		k, err := KeptContent(c.sel, []byte(old), fileDiff)
		if err != nil || k.Whole != c.whole || (!c.whole && string(k.Content) != c.want) {
			t.Errorf("%s: %+v %v", c.name, k, err)
		}
	}
	// A hunk index the diff does not have, or hunks that no longer match
	// the file, are errors: nothing is guessed.
	if _, err := KeptContent(sel(engine.FileSelection{Path: "a.txt", Hunks: []int{3}}), []byte(old), fileDiff); err == nil {
		t.Error("hunk 4 of 3 accepted")
	}
	if _, err := KeptContent(sel(engine.FileSelection{Path: "a.txt", Hunks: []int{0}}), []byte(lines(30, map[int]string{1: "changed"})), fileDiff); err == nil {
		t.Error("a stale hunk applied")
	}
	// A new file and a deleted one are named by their real side.
	add, _, _ := diff.Unified(diff.DevNull, "new.txt", nil, []byte("a\nb\n"))
	del, _, _ := diff.Unified("gone.txt", diff.DevNull, []byte("a\n"), nil)
	if n, d := DiffName(add), DiffName(del); n != "new.txt" || d != "gone.txt" {
		t.Errorf("names %q %q", n, d)
	}
	if k, err := KeptContent(sel(engine.FileSelection{Path: "new.txt", Hunks: []int{0}}), nil, add); err != nil || string(k.Content) != "a\nb\n" {
		t.Errorf("new file: %+v %v", k, err)
	}
}
