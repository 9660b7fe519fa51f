package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/kaizen-code/kz/tools/permission"
)

// GrantsFile holds the rules a person allowed with "always allow". It sits
// beside the user config and is part of it: kz writes it, the person may
// edit it, and it is loaded as user allow rules. Keeping it apart from
// config.toml means kz never rewrites a file the person wrote by hand.
type GrantsFile struct {
	Path string
	mu   sync.Mutex
}

type grantsDoc struct {
	Allow []string `toml:"allow"`
}

// NewGrantsFile returns the grants file next to the user config.
func NewGrantsFile(p Paths) *GrantsFile {
	return &GrantsFile{Path: filepath.Join(filepath.Dir(p.UserConfig), "grants.toml")}
}

// Rules reads the persisted allow rules; a missing file has none. A rule
// the gate could not parse (the person may edit the file) is an error
// naming the file and line. Adding and removing rules do not judge the
// others, so that a bad rule can still be revoked.
func (g *GrantsFile) Rules() ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	rules, data, err := g.readData()
	if err != nil || len(rules) == 0 {
		return rules, err
	}
	if err := checkRules(rules, "allow", permission.ActionAllow, indexLines(g.Path, data)); err != nil {
		return nil, err
	}
	return rules, nil
}

func (g *GrantsFile) read() ([]string, error) {
	rules, _, err := g.readData()
	return rules, err
}

// readData decodes the file and also returns its bytes.
func (g *GrantsFile) readData() ([]string, []byte, error) {
	data, err := os.ReadFile(g.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read grants: %w", err)
	}
	var d grantsDoc
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, nil, positioned(g.Path, err)
	}
	return d.Allow, data, nil
}

// AddAllowRule persists one rule (the gate's RuleWriter). The file is
// rewritten atomically with mode 0600; a rule already there is not added
// twice.
func (g *GrantsFile) AddAllowRule(_ context.Context, rule string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	rules, err := g.read()
	if err != nil {
		return err
	}
	if slices.Contains(rules, rule) {
		return nil
	}
	rules = append(rules, rule)
	body, err := toml.Marshal(grantsDoc{Allow: rules})
	if err != nil {
		return fmt.Errorf("write grants: %w", err)
	}
	body = append([]byte("# Rules allowed with \"always allow\" in kz. Edit or delete lines to revoke them.\n"), body...)
	return writeAtomic(g.Path, body)
}

// writeAtomic writes a small file with mode 0600 through a temp file and a
// rename, so a crash leaves the old file or the new one.
func writeAtomic(path string, body []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(body); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
