package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadCommands(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	writeFiles(t, user, map[string]string{
		"review.md":     "---\ndescription: review a file\n---\nReview $ARGUMENTS carefully.\n",
		"fix.md":        "user fix",
		"Bad Name.md":   "x",
		"help.md":       "shadows a builtin",
		"notes.txt":     "not a command",
		"huge.md":       strings.Repeat("x", maxCommandBytes+1),
		"explain-it.md": "Explain the code.",
	})
	writeFiles(t, project, map[string]string{"fix.md": "project fix for $ARGUMENTS"})
	cmds, err := LoadCommands(user, filepath.Join(user, "missing"), project)
	if err == nil || !strings.Contains(err.Error(), "Bad Name.md") || !strings.Contains(err.Error(), "/help is built in") || !strings.Contains(err.Error(), "huge.md") {
		t.Errorf("errors: %v", err)
	}
	got := map[string]CustomCommand{}
	for _, c := range cmds {
		got[c.Name] = c
	}
	if len(got) != 3 || got["review"].Description != "review a file" || got["fix"].Template != "project fix for $ARGUMENTS" {
		t.Fatalf("commands: %+v", cmds)
	}
	if e := got["explain-it"].expand("in short"); e != "Explain the code.\n\nin short" {
		t.Errorf("expand without $ARGUMENTS: %q", e)
	}
}

func TestCustomCommandSubmits(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"review.md": "---\ndescription: review a file\n---\nReview $ARGUMENTS carefully.\n"})
	cmds, err := LoadCommands(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	m := testModel(t, f, 100, 30)
	for _, c := range cmds {
		m.custom = append(m.custom, c.asSlash())
	}
	m.typeText("/rev")
	if s := m.screen(); !strings.Contains(s, "/review [args]") || !strings.Contains(s, "review a file") {
		t.Fatalf("completion:\n%s", s)
	}
	m.input.Reset()
	m.command("/review main.go")
	var submitted []string
	for _, c := range f.Calls() {
		if c.method == "Submit" {
			submitted = append(submitted, c.args[0].(string))
		}
	}
	if len(submitted) != 1 || submitted[0] != "Review main.go carefully." {
		t.Fatalf("submitted %q", submitted)
	}
}
