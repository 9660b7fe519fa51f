package tools

import (
	"fmt"
	"os"
	"path/filepath"
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

// kz's own write_file and edit_file take part of a write: keeping one
// hunk of two writes exactly that hunk, snapshotted; keeping none writes
// nothing and tells the model why.
func TestExecutorWritesKeptHunk(t *testing.T) {
	t.Parallel()
	old := lines(20, nil)
	for _, c := range []struct {
		tool  string
		input map[string]any
	}{
		{"write_file", map[string]any{"path": "a.txt", "content": lines(20, map[int]string{2: "TWO", 19: "NINETEEN"})}},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": strings.Join(strings.SplitAfter(old, "\n")[1:19], ""),
			"new_string": strings.Join(strings.SplitAfter(lines(20, map[int]string{2: "TWO", 19: "NINETEEN"}), "\n")[1:19], "")}},
	} {
		f := newFixture(t)
		f.write(t, "a.txt", old)
		f.perm.answer = func(r engine.PermissionRequest) engine.Answer {
			if !r.Write {
				return engine.Answer{Decision: engine.DecisionAllow}
			}
			if r.Selection != engine.SelectionContent || len(diff.FileHunks(r.Diff)) != 2 {
				t.Errorf("%s: selection %q, diff\n%s", c.tool, r.Selection, r.Diff)
			}
			return engine.Answer{Decision: engine.DecisionAllow,
				Patch: &engine.PatchSelection{Files: []engine.FileSelection{{Path: DiffName(r.Diff), Hunks: []int{1}}}}}
		}
		if res := f.callID(t, "r1", "read_file", map[string]any{"path": "a.txt"}); res.IsError {
			t.Fatal(res.Output)
		}
		if res := f.callID(t, "w1", c.tool, c.input); res.IsError {
			t.Fatalf("%s: %s", c.tool, res.Output)
		}
		if got := readWS(t, f, "a.txt"); got != lines(20, map[int]string{19: "NINETEEN"}) {
			t.Errorf("%s: a.txt =\n%s", c.tool, got)
		}
		if s := f.snaps.all(); len(s) != 1 || string(s[0].Content) != old {
			t.Errorf("%s: snapshots %+v", c.tool, s)
		}
	}
	f := newFixture(t)
	f.write(t, "a.txt", old)
	f.perm.answer = func(r engine.PermissionRequest) engine.Answer {
		return engine.Answer{Decision: engine.DecisionAllow, Patch: &engine.PatchSelection{Files: []engine.FileSelection{{Path: "a.txt", Content: []byte(old)}}}}
	}
	if res := f.callID(t, "w1", "write_file", map[string]any{"path": "a.txt", "content": "new\n"}); !res.IsError || !strings.Contains(res.Output, "rejected every change") {
		t.Errorf("nothing kept: %+v", res)
	}
	if got := readWS(t, f, "a.txt"); got != old || len(f.snaps.all()) != 0 {
		t.Errorf("a write happened: %q", got)
	}
}

func readWS(t *testing.T, f *fixture, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws.Dir(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
