package thirdparty

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/atotto/clipboard"
)

// TestClipboardForkChoosesOnFirstUse: the fork looks for the clipboard
// commands on the first ReadAll or WriteAll, not at start (README.md), so
// the commands on PATH at that moment are the ones used. A fake xclip
// keeps what it is given in a file and prints it back.
func TestClipboardForkChoosesOnFirstUse(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "clip.txt")
	fake := "#!/bin/sh\ncase \"$1\" in\n-in) /bin/cat > '" + store + "' ;;\n-out) /bin/cat '" + store + "' ;;\n*) exit 2 ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "xclip"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("WAYLAND_DISPLAY", "")
	if err := clipboard.WriteAll("copied from kz"); err != nil {
		t.Fatalf("WriteAll: %v", err)
	}
	if clipboard.Unsupported {
		t.Fatal("Unsupported after a write through xclip")
	}
	got, err := os.ReadFile(store)
	if err != nil || string(got) != "copied from kz" {
		t.Fatalf("xclip was given %q (%v), want %q", got, err, "copied from kz")
	}
	if s, err := clipboard.ReadAll(); err != nil || s != "copied from kz" {
		t.Fatalf("ReadAll = %q, %v", s, err)
	}
}
