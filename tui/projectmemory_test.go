package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/memory"
)

// fileBook is a MemoryBook over a real workspace, as internal/app's.
type fileBook struct{ ws string }

func (b fileBook) MemoryFiles(ctx context.Context) ([]engine.MemoryFile, []string) {
	r := memory.Load(ctx, memory.Options{Workspace: b.ws})
	return r.Files, r.Problems
}

func (b fileBook) Remember(line string) (string, error) { return memory.Append(b.ws, line) }

type recordReasoning struct{ got []string }

func (r *recordReasoning) SetReasoning(s string) error {
	if _, err := strconvReasoning(s); err != nil {
		return err
	}
	r.got = append(r.got, s)
	return nil
}

// strconvReasoning accepts what llm.ParseReasoning accepts, enough for
// the test: the levels and numbers of at least 1024.
func strconvReasoning(s string) (string, error) {
	switch s {
	case "off", "low", "medium", "high", "4096":
		return s, nil
	}
	return "", os.ErrInvalid
}

func memoryWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", "CLAUDE.md": "Be brief. @docs/x.md\n", "docs/x.md": "x\n"} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func TestHashLineIsRememberedNotSent(t *testing.T) {
	ws := memoryWorkspace(t)
	sess := newFake()
	m := testModel(t, sess, 120, 30)
	m.ext.memory = fileBook{ws}
	m.command("# always run make lint")
	if calls := sess.Calls(); len(calls) != 0 {
		t.Fatalf("a # line reached the session: %+v", calls)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "CLAUDE.md")); string(b) != "Be brief. @docs/x.md\n- always run make lint\n" {
		t.Fatalf("CLAUDE.md = %q", b)
	}
	if s := m.screen(); !strings.Contains(s, "remembered in "+filepath.Join(ws, "CLAUDE.md")) {
		t.Fatalf("no confirmation:\n%s", s)
	}
	// A heading or a multi-line text starting with # is a prompt.
	m.command("## not memory")
	if calls := sess.Calls(); len(calls) != 1 || calls[0].method != "Submit" || calls[0].args[0] != "## not memory" {
		t.Fatalf("a heading was not sent: %+v", calls)
	}
}

func TestMemoryCommandListsAndEdits(t *testing.T) {
	ws := memoryWorkspace(t)
	m := testModel(t, newFake(), 160, 30)
	m.ext.memory = fileBook{ws}
	m.command("/memory")
	s := m.screen()
	for _, want := range []string{"1. " + filepath.Join(ws, "CLAUDE.md") + " · 6 tokens", "2. " + filepath.Join(ws, "docs", "x.md") + " · 1 tokens · imported",
		"2 memory files, about 7 tokens"} {
		if !strings.Contains(s, want) {
			t.Fatalf("missing %q:\n%s", want, s)
		}
	}
	editor := filepath.Join(t.TempDir(), "ed.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\necho EDITED >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VISUAL", editor)
	old := execProcess
	execProcess = func(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd { return func() tea.Msg { return fn(c.Run()) } }
	t.Cleanup(func() { execProcess = old })
	m.command("/memory 2")
	if b, _ := os.ReadFile(filepath.Join(ws, "docs", "x.md")); string(b) != "x\nEDITED\n" {
		t.Fatalf("the editor did not get docs/x.md: %q", b)
	}
	if s := m.screen(); !strings.Contains(s, "edited "+filepath.Join(ws, "docs", "x.md")) {
		t.Fatalf("no confirmation:\n%s", s)
	}
	m.command("/memory 9")
	if s := m.screen(); !strings.Contains(s, "usage: /memory") {
		t.Fatalf("a bad number was not refused:\n%s", s)
	}
}

func TestReasoningToggle(t *testing.T) {
	m := testModel(t, newFake(), 120, 30)
	m.command("/reasoning")
	if s := m.screen(); !strings.Contains(s, "reasoning cannot be changed") {
		t.Fatalf("without a setter:\n%s", s)
	}
	rs := &recordReasoning{}
	m.ext.reasoning = rs
	m.reasoning = "medium"
	m.command("/reasoning")
	m.command("/reasoning")
	m.command("/reasoning 4096")
	m.command("/reasoning extreme")
	if strings.Join(rs.got, ",") != "high,off,4096" {
		t.Fatalf("settings: %v", rs.got)
	}
	if s := m.screen(); !strings.Contains(s, "reasoning: 4096 from the next turn") || !strings.Contains(s, "reasoning: invalid argument") {
		t.Fatalf("screen:\n%s", s)
	}
}
