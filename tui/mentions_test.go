package tui

import (
	"context"
	"errors"
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

// fakeReader allows every path but "secret.txt".
type fakeReader struct{ asked []string }

func (f *fakeReader) ReadMention(_ context.Context, p string) (string, error) {
	f.asked = append(f.asked, p)
	if p == "secret.txt" {
		return "", errors.New("read_file secret.txt: the gate says deny: denied by rule Read(./secret.txt)")
	}
	return "1\tcontents of " + p, nil
}

// TestMentionsGoThroughTheReader: the submitted prompt carries each
// mentioned file as the reader (the read_file gate) returned it, and a
// refused one only with the reason.
func TestMentionsGoThroughTheReader(t *testing.T) {
	f := newFake()
	r := &fakeReader{}
	m := testModel(t, f, 100, 30)
	m.ext.mentions = r
	m.typeText("look at @a.go and @secret.txt, and @a.go again")
	m.press("enter")
	var prompt string
	for _, c := range f.Calls() {
		if c.method == "Submit" {
			prompt = c.args[0].(string)
		}
	}
	if strings.Join(r.asked, ",") != "a.go,secret.txt" {
		t.Fatalf("asked %q", r.asked)
	}
	for _, want := range []string{"look at @a.go and @secret.txt, and @a.go again", "<file path=\"a.go\">\n1\tcontents of a.go\n</file>",
		"(@secret.txt not attached: read_file secret.txt: the gate says deny"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
}
