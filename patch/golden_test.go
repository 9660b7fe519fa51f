package patch

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const goldenDir = "../testdata/patch/golden"

// testGuard stands in for the gate's protected-path check in golden tests:
// it refuses agent configuration and kz's own directory at any depth.
type testGuard struct{}

func (testGuard) CheckWrite(_ context.Context, rel string) error {
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case ".claude", ".kz", ".mcp.json":
			return errors.New("agent or kz configuration is protected")
		}
	}
	return nil
}

type treeFile struct {
	content []byte
	exec    bool
}

// readTree reads the regular files under dir (skipping .keep markers and
// symlinks, which the setup creates).
func readTree(t *testing.T, dir string) map[string]treeFile {
	t.Helper()
	out := map[string]treeFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 || d.Name() == ".keep" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = treeFile{b, info.Mode().Perm()&0o100 != 0}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func compareTrees(t *testing.T, label string, got, want map[string]treeFile) {
	t.Helper()
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		g, gok := got[n]
		w, wok := want[n]
		switch {
		case !gok:
			t.Errorf("%s: %s missing", label, n)
		case !wok:
			t.Errorf("%s: unexpected file %s", label, n)
		case !bytes.Equal(g.content, w.content):
			t.Errorf("%s: %s content differs\n got: %q\nwant: %q", label, n, g.content, w.content)
		case g.exec != w.exec:
			t.Errorf("%s: %s executable bit %v, want %v", label, n, g.exec, w.exec)
		}
	}
}

// setupTree copies before/ into a temp workspace and creates the symlinks
// listed in symlinks.txt ("name -> target"; target "@outside" is a
// directory outside the workspace; a line "dir/" creates a directory,
// which lets a case have a real .git directory git itself cannot store).
func setupTree(t *testing.T, caseDir string) string {
	t.Helper()
	work := t.TempDir()
	src := filepath.Join(caseDir, "before")
	for rel, f := range readTree(t, src) {
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if f.exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.content, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if links, err := os.ReadFile(filepath.Join(caseDir, "symlinks.txt")); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(links)), "\n") {
			if strings.HasSuffix(l, "/") && !strings.Contains(l, " -> ") {
				if err := os.MkdirAll(filepath.Join(work, l), 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			name, target, ok := strings.Cut(l, " -> ")
			if !ok {
				t.Fatalf("bad symlinks.txt line %q", l)
			}
			if target == "@outside" {
				target = t.TempDir()
			}
			if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return work
}

func TestGolden(t *testing.T) {
	cases, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		n++
		caseDir := filepath.Join(goldenDir, c.Name())
		t.Run(c.Name(), func(t *testing.T) { runGolden(t, caseDir) })
	}
	if n < 30 {
		t.Fatalf("only %d golden cases found", n)
	}
}

func runGolden(t *testing.T, caseDir string) {
	ctx := context.Background()
	work := setupTree(t, caseDir)
	before := readTree(t, work)
	text, err := os.ReadFile(filepath.Join(caseDir, "proposal.txt"))
	if err != nil {
		t.Fatal(err)
	}
	snaps := &MemorySnapshots{}
	a := &Applier{FS: openWorkspace(t, work), Guard: testGuard{}, Snapshots: snaps, JournalDir: t.TempDir()}
	p, err := Parse(string(text))
	var plan *Plan
	if err == nil {
		plan, err = a.Validate(ctx, p)
	}
	if err == nil {
		if diffs := Preview(plan); len(diffs) != len(plan.Files) {
			t.Fatalf("preview has %d files, plan %d", len(diffs), len(plan.Files))
		}
		if want, rerr := os.ReadFile(filepath.Join(caseDir, "step.txt")); rerr == nil {
			checkStep(t, plan, Step(strings.TrimSpace(string(want))))
		}
		_, err = a.Apply(ctx, plan)
	}
	if testing.Verbose() && err != nil {
		t.Logf("refused: %v", err)
	}
	if wantErr, rerr := os.ReadFile(filepath.Join(caseDir, "error.txt")); rerr == nil {
		want := strings.TrimSpace(string(wantErr))
		if err == nil {
			t.Fatalf("applied, want error %q", want)
		}
		if !errorMatches(err, want) {
			t.Fatalf("error %q does not match %q", err, want)
		}
		compareTrees(t, "tree after refusal", readTree(t, work), before)
		if fb := FormatFeedback(err); !strings.Contains(fb, "NOT applied") && !strings.Contains(fb, "could not be used") {
			t.Errorf("feedback lacks the refusal: %s", fb)
		}
		return
	}
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	compareTrees(t, "after", readTree(t, work), readTree(t, filepath.Join(caseDir, "after")))
	if err := a.Undo(ctx, snaps, snaps.Last()); err != nil {
		t.Fatalf("undo: %v", err)
	}
	compareTrees(t, "after undo", readTree(t, work), before)
}

// errorMatches accepts a refusal kind (for validation errors) or a
// substring of the error message.
func errorMatches(err error, want string) bool {
	var ve *ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			if string(p.Kind) == want {
				return true
			}
		}
	}
	return strings.Contains(err.Error(), want)
}

// checkStep asserts that every edit of the plan was located by the ladder
// rung the case is about.
func checkStep(t *testing.T, plan *Plan, want Step) {
	t.Helper()
	n := 0
	for _, f := range plan.Files {
		for _, e := range f.Edits {
			n++
			if e.Step != want {
				t.Errorf("%s edit %d located by %q, want %q", f.Path, e.Index+1, e.Step, want)
			}
		}
	}
	if n == 0 {
		t.Errorf("no edits located, want step %q", want)
	}
}
