package tools

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedDiffApplies checks the preview diff is a real unified diff:
// patch(1) applied to the old content must give the new content.
func TestUnifiedDiffApplies(t *testing.T) {
	t.Parallel()
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("no patch(1)")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
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
		oldText, newText := strings.Join(old, "\n")+"\n", strings.Join(cur, "\n")+"\n"
		if i%5 == 0 {
			newText = strings.TrimSuffix(newText, "\n")
		}
		diff := UnifiedDiff("f.txt", []byte(oldText), []byte(newText), true)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(oldText), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(patchBin, "-p1", "--quiet", "--fuzz=0")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch failed: %v\n%s\n%s", i, err, out, diff)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
		if string(got) != newText {
			t.Fatalf("case %d: patched content differs\n%s", i, diff)
		}
	}
	if d := UnifiedDiff("f", []byte("same\n"), []byte("same\n"), true); d != "" {
		t.Errorf("no-change diff = %q", d)
	}
}
