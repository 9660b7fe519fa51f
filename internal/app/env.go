package app

import (
	"context"
	"fmt"
	"github.com/kaizen-code/kz/tools/hooks"
	"io"
	"os"
	"path/filepath"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/store"
)

// Env is where a command runs: the workspace (the working directory,
// symlinks resolved), where kz's files are, the configuration read from
// them, and the data directory that holds the session database. Every
// command that reads the configuration or touches sessions starts from
// one.
type Env struct {
	Workspace string
	Paths     config.Paths
	Config    *config.Config
	// DataDir is the configured data directory, or the one --data-dir
	// named.
	DataDir string

	// hooks is the runner Gate built, which osSandbox hands the sandbox.
	hooks *hooks.Runner
}

// Load reads the configuration of the working directory. dataDir, when
// not empty, replaces the configured data directory (--data-dir).
func Load(dataDir string) (*Env, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("find working directory: %w", err)
	}
	ws, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return nil, fmt.Errorf("resolve working directory: %w", err)
	}
	paths, err := config.DefaultPaths(ws)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(paths)
	if err != nil {
		return nil, err
	}
	e := &Env{Workspace: ws, Paths: paths, Config: cfg, DataDir: cfg.DataDir}
	if dataDir != "" {
		e.DataDir, err = filepath.Abs(dataDir)
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	return e, nil
}

// DatabasePath is the session database in the data directory.
func (e *Env) DatabasePath() string { return filepath.Join(e.DataDir, "kz.db") }

// OpenStore opens the session database for a command that writes it. What
// the store recovered on opening (a turn of a killed kz closed, damage
// found) is a warning on warn.
func (e *Env) OpenStore(ctx context.Context, warn io.Writer) (*store.Store, error) {
	st, err := store.Open(ctx, e.DatabasePath())
	if err != nil {
		if store.IsReadOnly(err) {
			return nil, fmt.Errorf("the data dir %s is read-only, and kz must write its sessions there: make it writable or choose another with --data-dir (%w)", e.DataDir, err)
		}
		return nil, err
	}
	if st.Recovered != "" {
		_, _ = fmt.Fprintf(warn, "kz: warning: %s\n", st.Recovered)
	}
	return st, nil
}

// OpenStoreForReading is OpenStore for commands that only show sessions:
// when the data dir is read-only they still work, on the database as it is
// (see store.OpenReadOnly), with a warning.
func (e *Env) OpenStoreForReading(ctx context.Context, warn io.Writer) (*store.Store, error) {
	st, err := store.Open(ctx, e.DatabasePath())
	if err == nil {
		if st.Recovered != "" {
			_, _ = fmt.Fprintf(warn, "kz: warning: %s\n", st.Recovered)
		}
		return st, nil
	}
	if !store.IsReadOnly(err) {
		return nil, err
	}
	ro, rerr := store.OpenReadOnly(ctx, e.DatabasePath())
	if rerr != nil {
		return nil, fmt.Errorf("the data dir %s is read-only and its database cannot be read as it is: %w", e.DataDir, rerr)
	}
	_, _ = fmt.Fprintf(warn, "kz: warning: the data dir %s is read-only; showing the sessions as they are (a turn of a kz that was killed shows as running)\n", e.DataDir)
	return ro, nil
}

// Warn writes the configuration's warnings (what it ignored and why) to w,
// one a line.
func (e *Env) Warn(w io.Writer) {
	for _, msg := range e.Config.Warnings {
		_, _ = fmt.Fprintf(w, "kz: warning: %s\n", msg)
	}
}
