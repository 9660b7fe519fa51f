package diff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestUnified(t *testing.T) {
	t.Parallel()
	text, added, removed := Unified("f", "f", []byte("a\nb\nc\n"), []byte("a\nB\nc\nd"))
	want := "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n\\ No newline at end of file\n"
	if text != want || added != 2 || removed != 1 {
		t.Fatalf("got %q (+%d -%d)", text, added, removed)
	}
	if text, _, _ := Unified("a", "b", []byte("same\n"), []byte("same\n")); text != "" {
		t.Fatalf("identical contents gave %q", text)
	}
	if text, _, _ := Unified(DevNull, "n", nil, []byte("x\ny\n")); text != "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n" {
		t.Fatalf("new file: %q", text)
	}
	if text, _, _ := Unified("d", DevNull, []byte("x\n"), nil); text != "--- a/d\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n" {
		t.Fatalf("deleted file: %q", text)
	}
}

// TestUnifiedBeyondTheSurrogateRange: lines are encoded as runes for
// go-diff; with more distinct lines than the runes below the surrogate
// range, a change far down the file still shows its own text.
func TestUnifiedBeyondTheSurrogateRange(t *testing.T) {
	t.Parallel()
	var oldB, newB strings.Builder
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&oldB, "line %d\n", i)
		if i == 59000 {
			newB.WriteString("changed\n")
			continue
		}
		fmt.Fprintf(&newB, "line %d\n", i)
	}
	text, added, removed := Unified("f", "f", []byte(oldB.String()), []byte(newB.String()))
	want := "@@ -58998,7 +58998,7 @@\n line 58997\n line 58998\n line 58999\n-line 59000\n+changed\n line 59001\n line 59002\n line 59003\n"
	if added != 1 || removed != 1 || !strings.Contains(text, want) {
		t.Fatalf("added %d removed %d:\n%s", added, removed, text)
	}
}

// randomEdit returns a 60-line text and a copy with a few lines removed,
// inserted or changed; every fifth has no final newline and every
// seventh CRLF endings.
func randomEdit(rng *rand.Rand, i int) (string, string) {
	var old []string
	for j := range 60 {
		old = append(old, fmt.Sprintf("line %d", j))
	}
	cur := append([]string(nil), old...)
	for range 1 + rng.IntN(6) {
		k := rng.IntN(len(cur))
		switch rng.IntN(3) {
		case 0:
			cur = append(cur[:k], cur[k+1:]...)
		case 1:
			cur = append(cur[:k], append([]string{"new " + fmt.Sprint(rng.IntN(1000))}, cur[k:]...)...)
		default:
			cur[k] = "changed " + cur[k]
		}
	}
	eol := "\n"
	if i%7 == 3 {
		eol = "\r\n"
	}
	oldText, newText := strings.Join(old, eol)+eol, strings.Join(cur, eol)+eol
	if i%5 == 0 {
		newText = strings.TrimSuffix(newText, eol)
	}
	return oldText, newText
}

// TestUnifiedApplies checks the generated diff is a real unified diff:
// patch(1) applied to the old content gives the new content.
func TestUnifiedApplies(t *testing.T) {
	t.Parallel()
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("no patch(1)")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		oldText, newText := randomEdit(rng, i)
		text, _, _ := Unified("f.txt", "f.txt", []byte(oldText), []byte(newText))
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(oldText), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(patchBin, "-p1", "--quiet", "--fuzz=0")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch failed: %v\n%s\n%s", i, err, out, text)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
		if string(got) != newText {
			t.Fatalf("case %d: patched content differs\n%s", i, text)
		}
	}
}

// withoutSource drops what Parse records about where it read a hunk, the
// one thing a computed hunk does not have.
func withoutSource(fs []File) []File {
	for i := range fs {
		fs[i].HeaderLine, fs[i].BinaryLine = 0, 0
		for j := range fs[i].Hunks {
			fs[i].Hunks[j].Src = Source{}
		}
	}
	return fs
}

// TestRoundTrip: Parse reads Format's output back into the same file,
// hunk for hunk and byte for byte, and Apply of the hunks (all, or any
// subset) to the old content gives the new one (or the subset's).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		oldText, newText := randomEdit(rng, i)
		f := File{OldPath: "x/f.go", NewPath: "x/f.go", Hunks: Hunks([]byte(oldText), []byte(newText))}
		if i%4 == 1 {
			f.OldMode, f.NewMode = "100644", "100755"
		}
		got := Parse(Format(f))
		if len(got) != 1 || got[0].HeaderLine == 0 || got[0].Hunks[0].Src.Line == 0 {
			t.Fatalf("case %d: %d files, %+v", i, len(got), got)
		}
		if !reflect.DeepEqual(withoutSource(got)[0], f) {
			t.Fatalf("case %d: read back\n%+v\nwant\n%+v", i, got[0], f)
		}
		applied, err := Apply([]byte(oldText), f.Hunks, nil)
		if err != nil || string(applied) != newText {
			t.Fatalf("case %d: Apply = %q, %v", i, applied, err)
		}
		if len(f.Hunks) < 2 {
			continue
		}
		// Keeping only the first hunk is the new content of the first
		// hunk's region and the old content elsewhere.
		first, err := Apply([]byte(oldText), f.Hunks, func(h int) bool { return h == 0 })
		if err != nil {
			t.Fatal(err)
		}
		rest := Hunks(first, []byte(newText))
		if len(rest) != len(f.Hunks)-1 {
			t.Fatalf("case %d: after the first hunk %d hunks are left of %d", i, len(rest), len(f.Hunks))
		}
		back, err := Apply([]byte(newText), f.Reverse().Hunks, nil)
		if err != nil || string(back) != oldText {
			t.Fatalf("case %d: the reversed hunks give %q, %v", i, back, err)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	text := "diff --git a/old/name.go b/new/name.go\nsimilarity index 90%\nrename from old/name.go\nrename to new/name.go\n" +
		"--- a/old/name.go\n+++ b/new/name.go\n@@ -1,2 +1,2 @@ package\r\n-package old\r\n+package name\r\n // Name names.\n" +
		"diff --git a/logo.png b/logo.png\nindex 1234567..89abcde 100644\nBinary files a/logo.png and b/logo.png differ\n" +
		"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n" +
		"diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n" +
		"--- \"a/sp ace\"\t2024-01-01\n+++ \"b/sp ace\"\n@@ -3 +3 @@\n-a\n+b\n\n\n"
	fs := Parse(text)
	if len(fs) != 5 {
		t.Fatalf("%d files: %+v", len(fs), fs)
	}
	r := fs[0]
	if r.RenameFrom != "old/name.go" || r.RenameTo != "new/name.go" || r.OldPath != "old/name.go" || r.NewPath != "new/name.go" ||
		r.HeaderLine != 5 || len(r.Hunks) != 1 {
		t.Errorf("rename: %+v", r)
	}
	h := r.Hunks[0]
	if h.Header != "@@ -1,2 +1,2 @@ package" || h.Src.Line != 7 || h.Src.EndLine != 10 || h.Lines[0].Text != "package old\r\n" ||
		h.Lines[0].EOL() != "\r\n" || h.Lines[0].Content() != "package old" || h.Lines[2].Op != Context {
		t.Errorf("rename hunk: %+v", h)
	}
	if b := fs[1]; !b.Binary || b.BinaryLine != 13 || b.NewPath != "logo.png" || len(b.Hunks) != 0 {
		t.Errorf("binary: %+v", b)
	}
	if m := fs[2]; m.OldMode != "100644" || m.NewMode != "100755" || m.NewPath != "run.sh" || len(m.Hunks) != 0 {
		t.Errorf("mode change: %+v", m)
	}
	if n := fs[3]; n.NewFileMode != "100644" || n.OldPath != DevNull || n.NewPath != "n.txt" || n.Hunks[0].Lines[1].Text != "y" || n.Hunks[0].Lines[1].EOL() != "" {
		t.Errorf("new file: %+v", n)
	}
	// A quoted path with a timestamp; the trailing empty lines beyond the
	// hunk's counts are separators, not context.
	if q := fs[4]; q.OldPath != "sp ace" || len(q.Hunks[0].Lines) != 2 || q.Hunks[0].OldStart != 3 || q.Hunks[0].OldLines != 1 {
		t.Errorf("quoted: %+v", q)
	}

	bare := Parse("prose\n-x\n+y\n")
	if len(bare) != 1 || bare[0].Hunks[0].Header != "" || bare[0].Hunks[0].OldStart != 1 || bare[0].Hunks[0].Src.Line != 2 {
		t.Errorf("headerless: %+v", bare)
	}
	if a, r := bare[0].Stat(); a != 1 || r != 1 {
		t.Errorf("headerless stat +%d -%d", a, r)
	}
	cut := Parse("--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n x\n-y\n")
	if !cut[0].Hunks[0].Src.Truncated {
		t.Errorf("a cut-off hunk is not marked: %+v", cut)
	}
	// Until a hunk has its lines, a ---/+++ pair is a removed and an
	// added line.
	dash := Parse("--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n a\n--- a/b\n+++ b/b\n")
	if len(dash) != 2 || len(dash[0].Hunks[0].Lines) != 3 || dash[1].NewPath != "b" {
		t.Errorf("dashes: %+v", dash)
	}
	if bad := Parse("--- a/a\n+++ b/a\n@@ -x +1 @@\n-a\n"); !bad[0].Hunks[0].Src.BadHeader {
		t.Errorf("bad header not marked: %+v", bad)
	}
}

func TestReverse(t *testing.T) {
	t.Parallel()
	d := "--- a/f\n+++ b/f\n@@ -20,3 +20,4 @@ func helper() {\n \tx := 1\n-\treturn x\n+\ty := 2\n+\treturn x + y\n }\n"
	want := "--- a/f\n+++ b/f\n@@ -20,4 +20,3 @@ func helper() {\n \tx := 1\n+\treturn x\n-\ty := 2\n-\treturn x + y\n }\n"
	if got := Reverse(d); got != want {
		t.Fatalf("Reverse =\n%s\nwant\n%s", got, want)
	}
	if got := Reverse(Reverse(d)); got != d {
		t.Fatalf("reversed twice =\n%s", got)
	}
}

func TestChanged(t *testing.T) {
	t.Parallel()
	inOld, inNew := Changed(`var greeting = "hello"`, `var greeting = "hello, world"`, time.Second)
	if len(inOld) != 22 || len(inNew) != 29 || slices.Contains(inOld, true) || inNew[20] || !inNew[21] || !inNew[27] || inNew[28] {
		t.Fatalf("old %v new %v", inOld, inNew)
	}
}

// FuzzParse: whatever the text, Parse does not panic, its hunks' lines
// keep their endings, and what it read formats and reads back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"diff --git a/a b/a\nnew file mode 100755\n--- /dev/null\n+++ b/a\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n",
		"--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n x\n-y\n+z\n \n",
		"@@ -999999999999999999,1 +1 @@\n",
		"-x\n+y\r\n\n\nindex 1\n--- a\n+++ b\nrename from q\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, file := range Parse(s) {
			for _, h := range file.Hunks {
				for _, l := range h.Lines {
					if l.Op != Context && l.Op != Add && l.Op != Delete {
						t.Fatalf("line with op %q", l.Op)
					}
					// Only a "\" line takes a line's ending away.
					if l.EOL() == "" && !strings.Contains(s, `\`) {
						t.Fatalf("line %q lost its ending", l.Text)
					}
				}
			}
			if file.Binary || file.HeaderLine == 0 || len(file.Hunks) == 0 ||
				strings.ContainsAny(file.OldPath+file.NewPath, "\t\n\r\"\\") {
				continue
			}
			again := Parse(Format(file))
			if len(again) != 1 || len(again[0].Hunks) != len(file.Hunks) {
				t.Fatalf("%q formats as %q, which reads as %d files", s, Format(file), len(again))
			}
			for i, h := range file.Hunks {
				if len(h.Lines) > 0 && !reflect.DeepEqual(again[0].Hunks[i].Lines, h.Lines) {
					t.Fatalf("hunk %d of %q: lines %q read back as %q", i, s, h.Lines, again[0].Hunks[i].Lines)
				}
			}
		}
	})
}
