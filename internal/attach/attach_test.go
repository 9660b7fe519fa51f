package attach_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/internal/attach"
)

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImageReadsWorkspaceAndNamedAbsolutePaths(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	data := enginetest.PNG(t, 3, 3)
	write(t, filepath.Join(ws, "docs", "shot.jpg"), data) // a PNG with a JPEG name
	write(t, filepath.Join(outside, "screen.png"), data)
	for _, name := range []string{"docs/shot.jpg", filepath.Join(ws, "docs", "shot.jpg"), filepath.Join(outside, "screen.png")} {
		im, err := attach.Image(ws, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if im.MediaType != "image/png" || !bytes.Equal(im.Data, data) || im.Name != filepath.Base(name) {
			t.Errorf("%s: got %+v", name, im)
		}
	}
}

func TestImageRefusesWhatItMustNotRead(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "secret.png"), enginetest.PNG(t, 3, 3))
	write(t, filepath.Join(ws, "notes.png"), []byte("plain text, named like an image"))
	write(t, filepath.Join(ws, "big.png"), append(enginetest.PNG(t, 3, 3), make([]byte, engine.MaxImageBytes)...))
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(ws, "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"../" + filepath.Base(outside) + "/secret.png": "escapes",
		"link.png":        "escapes",
		"pipe.png":        "not a regular file",
		"dir.png":         "not a regular file",
		"big.png":         "more than the 5.0 MB",
		"missing.png":     "no such file",
		"bad\x00name.png": "control characters",
		"":                "empty image path",
	}
	for name, want := range cases {
		_, err := attach.Image(ws, name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error containing %q, got %v", name, want, err)
		}
	}
	if _, err := attach.Image(ws, "notes.png"); !errors.Is(err, engine.ErrNotImage) {
		t.Errorf("text named .png: want ErrNotImage, got %v", err)
	}
	if _, err := attach.Image(ws, "missing.png"); !attach.IsNotExist(err) {
		t.Errorf("missing file: IsNotExist must hold, got %v", err)
	}
	if _, err := attach.Image("", "rel.png"); err == nil {
		t.Error("a relative path without a workspace is refused")
	}
}
