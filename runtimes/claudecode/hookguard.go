package claudecode

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// hookGuardArgs are the flags that turn off the hooks of Claude's own
// settings (see baseArgs for why kz does so). Claude Code pays for them at
// every start: with any --settings (or an apply_flag_settings request)
// 2.1.197 takes 35-40 ms longer to answer a one-line prompt than without,
// measured side by side, whatever the settings hold. hookGuard passes them
// only where a hook could come from.
var hookGuardArgs = []string{"--settings", `{"disableAllHooks":true}`}

// hookGuard returns the flags that keep Claude's own hooks from running in
// workspace ws for a CLI started with environment env: hookGuardArgs, or
// nothing when no hook can reach the CLI.
//
// What it can prove is narrow on purpose, and everything else gets the
// flags: no hook is proven only when Claude's home holds no settings file,
// or one whose keys are all known to carry no hook, program or plugin;
// the home has none of the directories a hook can be declared in (skills,
// agents, commands, plugins, hooks); and every .claude of ws or of a
// directory above it (a project's skills and agents, which Claude reads
// whatever its setting sources) holds only entries known to declare none
// (claudeDirHookFree): a project whose .claude has only the permissions
// Claude wrote to settings.local.json gets no flags. A file it cannot
// read or parse is not proven either. Managed (policy) hooks are left out because
// the flags do not stop them: Claude runs a policy's hooks whatever a
// lower level says.
func hookGuard(env []string, ws string) []string {
	if hooksPossible(claudeHome(env), ws) {
		return hookGuardArgs
	}
	return nil
}

// hooksPossible reports whether a hook may reach a CLI whose Claude home
// is home, run in workspace ws.
func hooksPossible(home, ws string) bool {
	if !filepath.IsAbs(home) || !filepath.IsAbs(ws) {
		return true
	}
	for _, d := range hookDirs {
		if _, err := os.Lstat(filepath.Join(home, d)); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	if !settingsHookFree(filepath.Join(home, "settings.json")) {
		return true
	}
	home = filepath.Clean(home)
	for dir := filepath.Clean(ws); ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, ".claude")
		if _, err := os.Lstat(p); p != home && !errors.Is(err, fs.ErrNotExist) && !claudeDirHookFree(p) {
			return true
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}

// hookDirs are the directories of a Claude home in which a hook can be
// declared: skills and agents carry hooks in their front matter, commands
// are skills too, plugins bring their own hooks.json.
var hookDirs = []string{"skills", "agents", "commands", "plugins", "hooks"}

// claudeDirHookFree reports whether the .claude directory at p, a
// project's or one above it, is proven to declare no hook: each of its
// entries is one of hookFreeEntries, and its settings files hold only
// hook-free keys (settingsHookFree). Anything else in it (a skills or
// agents directory, a name kz does not know, which a newer Claude could
// read hooks from) is not proven, nor is a p that is no directory.
func claudeDirHookFree(p string) bool {
	ents, err := os.ReadDir(p)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !hookFreeEntries[e.Name()] {
			return false
		}
	}
	return settingsHookFree(filepath.Join(p, "settings.json")) && settingsHookFree(filepath.Join(p, "settings.local.json"))
}

// hookFreeEntries are the entries of a project's .claude known to declare
// no hook: its settings files (whose keys are checked), its memory files,
// and the transcripts a Claude home keeps (a .claude that was a home
// once).
var hookFreeEntries = map[string]bool{
	"settings.json": true, "settings.local.json": true, "CLAUDE.md": true, "CLAUDE.local.md": true, "projects": true,
}

// settingsHookFree reports whether the settings file at path is missing
// or holds only keys known to declare no hook: neither hooks nor
// statusLine (both run programs) nor enabledPlugins (a plugin brings
// hooks), nor any key not listed here, which a newer Claude could give
// hooks.
func settingsHookFree(path string) bool {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return false
	}
	for k := range keys {
		if !hookFreeSettings[k] {
			return false
		}
	}
	return true
}

// hookFreeSettings are the keys of Claude's settings.json that declare no
// hook and name no program Claude runs as a hook.
var hookFreeSettings = map[string]bool{
	"$schema": true, "model": true, "permissions": true, "env": true, "theme": true,
	"cleanupPeriodDays": true, "includeCoAuthoredBy": true, "includeGitInstructions": true,
	"alwaysThinkingEnabled": true, "outputStyle": true, "language": true, "effortLevel": true,
	"spinnerTipsEnabled": true, "respectGitignore": true, "autoUpdatesChannel": true,
	"feedbackSurveyState": true, "forceLoginMethod": true, "forceLoginOrgUUID": true,
}
