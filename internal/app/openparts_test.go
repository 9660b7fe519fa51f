package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/store"
	"go.uber.org/goleak"
)

// TestOpenPartsFailureClosesTheOthers: the store opens beside the gate
// and the sandbox, so either may fail while the other has opened. The
// store's error is reported first, as before, and whatever did open is
// closed: no sandbox directory is left in TMPDIR, no store holds the
// database, no goroutine is left behind.
func TestOpenPartsFailureClosesTheOthers(t *testing.T) {
	for _, c := range []struct {
		name, config, want string
		badData            bool
	}{
		{name: "store", badData: true, want: "open database"},
		{name: "sandbox", config: "[sandbox]\nwritable = [\"/nonexistent/kz-writable\"]\n", want: "[sandbox] writable"},
		{name: "both", badData: true, config: "[sandbox]\nwritable = [\"/nonexistent/kz-writable\"]\n", want: "open database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			home := firstRunHome(t)
			tmp := filepath.Join(home, "tmp")
			if err := os.MkdirAll(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("TMPDIR", tmp)
			if c.config != "" {
				cfg := filepath.Join(home, ".config", "kz", "config.toml")
				if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfg, []byte(c.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			data := filepath.Join(home, "data")
			if c.badData {
				// A file where the data directory should be.
				if err := os.WriteFile(data, []byte("not a directory"), 0o600); err != nil {
					t.Fatal(err)
				}
				data = filepath.Join(data, "kz")
			}
			a, err := Open(context.Background(), Options{DataDir: data})
			if err == nil {
				a.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
			if !c.badData {
				// The store had opened: a salvage, which needs every kz
				// on the database gone, finds none.
				if _, err := store.Salvage(context.Background(), filepath.Join(data, "kz.db"), "test"); errors.Is(err, store.ErrDatabaseInUse) {
					t.Error("the failed Open left the store open")
				}
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				if strings.HasPrefix(e.Name(), "kz-sandbox") {
					t.Errorf("the failed Open left %s in TMPDIR", e.Name())
				}
			}
		})
	}
}
