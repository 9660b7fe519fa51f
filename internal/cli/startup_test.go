package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/creack/pty"
)

// TestStartDoesNotRunTmux: inside tmux, colour detection asks `tmux info`
// in a subprocess, which costs 10 to 25 ms. lipgloss did that at package
// init, so every kz process paid it; kz builds with a lipgloss that does
// not (third_party/lipgloss). A fake tmux first in PATH records any call.
func TestStartDoesNotRunTmux(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "calls")
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte("#!/bin/sh\necho \"$@\" >> '"+marker+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "version")
	cmd.Env = append(os.Environ(), "KZ_MAIN=1", "TMUX=/tmp/tmux-0/default,1,0", "TERM=tmux-256color",
		"COLORTERM=", "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Colour detection asks tmux only when the output is a terminal.
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(ptmx) // ends with EIO once kz has exited
	_ = ptmx.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kz version: %v\n%s", err, out)
	}
	if calls, err := os.ReadFile(marker); err == nil {
		t.Fatalf("kz version ran tmux at start: %q", calls)
	}
	// The fake works: a direct call is recorded.
	if err := exec.Command(filepath.Join(dir, "tmux"), "info").Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the fake tmux recorded nothing: %v", err)
	}
}
