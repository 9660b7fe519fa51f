package tui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mentionWorkspace builds a workspace with ignored, hidden and vendored
// files next to ordinary ones.
func mentionWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		".gitignore":            "build/\n*.log\n/top.txt\n# comment\n",
		"main.go":               "package main\n",
		"top.txt":               "ignored at the root only\n",
		"pkg/parser.go":         "package pkg\n",
		"pkg/top.txt":           "kept: the pattern is anchored\n",
		"pkg/.gitignore":        "gen_*.go\n",
		"pkg/gen_x.go":          "ignored by the nested .gitignore\n",
		"build/out.bin":         "ignored directory\n",
		"debug.log":             "ignored glob\n",
		".git/config":           "hidden\n",
		"node_modules/x/i.js":   "vendored\n",
		"docs/parsing notes.md": "a space in the name\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestListWorkspace(t *testing.T) {
	files, err := listWorkspace(context.Background(), mentionWorkspace(t))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	want := []string{".gitignore", "docs/parsing notes.md", "main.go", "pkg/.gitignore", "pkg/parser.go", "pkg/top.txt"}
	if !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
}

func TestMentionCompletion(t *testing.T) {
	m := testModel(t, newFake(), 100, 30)
	m.ext.workspace = mentionWorkspace(t)
	m.typeText("look at @pars")
	s := m.screen()
	if !strings.Contains(s, "@pkg/parser.go") || !strings.Contains(s, "@docs/parsing notes.md") || strings.Contains(s, "@main.go") {
		t.Fatalf("completions:\n%s", s)
	}
	m.press("tab")
	if v := m.input.Value(); v != "look at @pkg/parser.go " {
		t.Fatalf("after tab: %q", v)
	}
	m.typeText("and @notes")
	m.press("tab")
	if v := m.input.Value(); v != `look at @pkg/parser.go and @"docs/parsing notes.md" ` {
		t.Fatalf("quoted path: %q", v)
	}
	m.typeText("@zzzz")
	if s := m.screen(); !strings.Contains(s, "no file matches @zzzz") {
		t.Fatalf("no match:\n%s", s)
	}
}
