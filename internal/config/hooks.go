package config

import "github.com/kaizen-code/kz/tools/hooks"

// applyHooks checks a file's [hooks] table and keeps it by source. Hooks
// start processes, so a project's hooks are refused until the folder is
// trusted (SECURITY.md rule 4): they are neither kept nor run, and the
// warning says so. Trust is tied to the project file's hash, which covers
// every hook's command line.
func (cfg *Config) applyHooks(h hooks.Config, lines keyLines, full, user bool) error {
	if len(h) == 0 {
		return nil
	}
	if err := hooks.Validate(h); err != nil {
		return lines.wrap("hooks", err)
	}
	switch {
	case user:
		cfg.UserHooks = h
	case full:
		cfg.ProjectHooks = h
	default:
		cfg.Warnings = append(cfg.Warnings, lines.file+": hooks ignored until you trust this folder (kz trust)")
		cfg.Untrusted = append(cfg.Untrusted, "hooks")
	}
	return nil
}
