package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SandboxFile is the [sandbox] table as written.
type SandboxFile struct {
	// Network lets commands allowed by a rule, a grant, yolo or the person
	// (the workspace-write profile) reach the network; nil leaves the
	// default, true. Read-only commands never get it.
	Network *bool `toml:"network"`
	// Writable are more directories workspace-write commands may write
	// (caches outside the workspace: ~/.cache/go-build, ~/.npm),
	// absolute or "~/"-relative.
	Writable []string `toml:"writable"`
}

// Sandbox is the merged [sandbox] configuration.
type Sandbox struct {
	Network  bool
	Writable []string
}

// applySandbox merges one file's [sandbox] table. The network is the
// user's to open: a project may turn it off, and only a trusted one may
// turn it on. Writable directories come from the user file alone, trusted
// project or not: they open the machine outside the folder, which is not
// a project's to decide.
func (cfg *Config) applySandbox(s SandboxFile, lines keyLines, full, user bool) error {
	for i, w := range s.Writable {
		key := fmt.Sprintf("sandbox.writable.%d", i)
		if strings.TrimSpace(w) == "" {
			return lines.errorf(key, "empty path")
		}
		if w != "~" && !strings.HasPrefix(w, "~/") && !filepath.IsAbs(w) {
			return lines.errorf(key, "%q: want an absolute path or one starting with ~/", w)
		}
		if strings.ContainsRune(w, 0) {
			return lines.errorf(key, "the path holds a NUL byte")
		}
	}
	if s.Network != nil {
		if *s.Network && !full {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: [sandbox] network = true ignored until you trust this folder (kz trust)", lines.file))
		} else {
			cfg.Sandbox.Network = *s.Network
		}
	}
	if len(s.Writable) > 0 {
		if !user {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: [sandbox] writable can only be set in the user config", lines.file))
			return nil
		}
		cfg.Sandbox.Writable = append(cfg.Sandbox.Writable, s.Writable...)
	}
	return nil
}
