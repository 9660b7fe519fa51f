package logging

import (
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]Level{"debug": LevelDebug, "INFO": LevelInfo, " warn ": LevelWarn, "warning": LevelWarn, "error": LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseLevel("loud"); err == nil || !strings.Contains(err.Error(), "KZ_LOG") {
		t.Errorf("ParseLevel(loud): %v", err)
	}
}

// Install sends slog's default logger and the standard logger to the file
// at the level asked for, and Close puts back what was there.
func TestInstallAndClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "kz")
	before, beforeOut := slog.Default(), log.Writer()
	l, err := Install(dir, LevelWarn)
	if err != nil {
		t.Fatal(err)
	}
	slog.Info("an info line")
	slog.Warn("a warn line", "k", "v")
	log.Print("a standard logger line")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if slog.Default() != before || log.Writer() != beforeOut {
		t.Error("Close did not restore the loggers")
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "an info line") || !strings.Contains(s, "a warn line") || !strings.Contains(s, "k=v") {
		t.Errorf("log at warn:\n%s", s)
	}
	// The standard logger logs at INFO, below warn: dropped here.
	if strings.Contains(s, "standard logger") {
		t.Errorf("a standard logger line passed the warn level:\n%s", s)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, FileName): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
}

// A log past its size bound is started anew, the old one kept once.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	paths := Paths(dir)
	if err := os.WriteFile(paths[0], make([]byte, maxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Install(dir, LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	slog.Info("fresh")
	_ = l.Close()
	if fi, err := os.Stat(paths[1]); err != nil || fi.Size() != maxSize+1 {
		t.Errorf("the old log was not kept: %v", err)
	}
	if b, _ := os.ReadFile(paths[0]); !strings.Contains(string(b), "fresh") || len(b) > 1000 {
		t.Errorf("the new log holds %d bytes", len(b))
	}
}

// Without a usable state directory logs are dropped, never written to
// the terminal.
func TestUnwritableDropsLogs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Install(filepath.Join(file, "kz"), LevelInfo)
	if err == nil {
		t.Error("no error for a state directory under a file")
	}
	if l.Path != "" {
		t.Errorf("Path = %q", l.Path)
	}
	slog.Error("dropped")
	_ = l.Close()
}
