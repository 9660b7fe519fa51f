// Package logging sends what kz logs to a file in its state directory.
//
// While the TUI runs it owns the terminal: a line written to stderr by
// any package (an agent runtime's "session/load failed", an SDK's retry
// notice) would tear the screen. So a session installs the log file as
// the process's slog default logger and as the standard logger's output
// before anything is built, and every package logs through those (the
// runtimes take slog.Default() when they are built). Headless kz -p does
// the same: its stderr carries the command's own messages, not logs.
package logging

import (
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Level is how much kz logs: the value of KZ_LOG.
type Level string

// The levels, from the most to the least verbose.
const (
	LevelDebug Level = "debug"
	LevelInfo  Level = "info"
	LevelWarn  Level = "warn"
	LevelError Level = "error"
)

// DefaultLevel is the level without --debug or KZ_LOG.
const DefaultLevel = LevelInfo

// EnvVar names the variable that sets the level.
const EnvVar = "KZ_LOG"

// FileName is the log file in kz's state directory; the file it
// replaced when it grew past maxSize is FileName + ".1".
const FileName = "kz.log"

// maxSize is the size past which the log is started anew when a session
// opens it (the old one kept as kz.log.1), so that it cannot grow without
// bound.
const maxSize = 8 << 20

// ParseLevel parses a level name (as KZ_LOG holds it).
func ParseLevel(s string) (Level, error) {
	switch l := Level(strings.ToLower(strings.TrimSpace(s))); l {
	case LevelDebug, LevelInfo, LevelWarn, LevelError:
		return l, nil
	case "warning":
		return LevelWarn, nil
	}
	return "", fmt.Errorf("%s=%q: want debug, info, warn or error", EnvVar, s)
}

// slogLevel is the slog level of l.
func (l Level) slogLevel() slog.Level {
	switch l {
	case LevelDebug:
		return slog.LevelDebug
	case LevelWarn:
		return slog.LevelWarn
	case LevelError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Paths are the log files in state directory dir: the current one and the
// one it replaced.
func Paths(dir string) []string {
	p := filepath.Join(dir, FileName)
	return []string{p, p + ".1"}
}

// Log is the installed log: the file, and what it replaced, which Close
// puts back.
type Log struct {
	// Path is the log file; empty when logs are dropped.
	Path string
	f    *os.File

	prev      *slog.Logger
	prevOut   io.Writer
	prevFlags int
	once      sync.Once
}

// Install makes the log file in state directory dir (created 0700, the
// file 0600, appended to) the process's slog default logger at level, and
// the standard logger's output. When the file cannot be opened, logs are
// dropped rather than written to the terminal, and the error says why.
// Close restores what was installed before.
func Install(dir string, level Level) (*Log, error) {
	l := &Log{prev: slog.Default(), prevOut: log.Writer(), prevFlags: log.Flags()}
	f, err := open(dir)
	w := io.Writer(io.Discard)
	if err == nil {
		l.f, l.Path, w = f, f.Name(), f
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level.slogLevel()})
	// SetDefault also points the standard logger at the handler (SDKs
	// log through it), at INFO.
	slog.SetDefault(slog.New(h).With("pid", os.Getpid()))
	return l, err
}

// open opens the log file for appending, starting it anew when it grew
// past maxSize.
func open(dir string) (*os.File, error) {
	if dir == "" {
		return nil, errors.New("log: no state directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	paths := Paths(dir)
	if fi, err := os.Stat(paths[0]); err == nil && fi.Size() > maxSize {
		// Another kz may have rotated it first; either way a fresh file
		// follows.
		_ = os.Rename(paths[0], paths[1])
	}
	f, err := os.OpenFile(paths[0], os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	return f, nil
}

// Close puts back the loggers Install replaced and closes the file. It is
// safe to call more than once, and on a nil Log.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	var err error
	l.once.Do(func() {
		// The standard logger first: with it still pointing at the
		// handler, restoring slog's own default handler (which writes
		// through the standard logger) would make the two call each other.
		log.SetOutput(l.prevOut)
		log.SetFlags(l.prevFlags)
		slog.SetDefault(l.prev)
		if l.f != nil {
			if cerr := l.f.Close(); cerr != nil {
				err = fmt.Errorf("log: %w", cerr)
			}
		}
	})
	return err
}
