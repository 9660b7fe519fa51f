package app

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/internal/logging"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// Gate builds the permission gate from the rules of every source: the
// user's config, the "always allow" grants file beside it, and the
// project's config (allow rules only once the folder is trusted), and the
// --allow/--ask/--deny flags of this invocation (cli). kz policy check
// builds it exactly as a session does.
func (e *Env) Gate(headless bool, cli permission.Rules) (*permission.Gate, error) {
	grants := config.NewGrantsFile(e.Paths)
	always, err := grants.Rules()
	if err != nil {
		return nil, err
	}
	up, proj := e.Config.UserPermissions, e.Config.ProjectPermissions
	hr, err := e.Hooks()
	if err != nil {
		return nil, err
	}
	var ph permission.PreToolHooks
	if hr != nil {
		// A nil *Runner in the interface would make a stage of nothing.
		ph = hr
		e.hooks = hr
	}
	g, err := permission.New(permission.Options{
		User:           permission.Rules{Allow: append(slices.Clone(up.Allow), always...), Ask: up.Ask, Deny: up.Deny},
		Project:        permission.Rules{Allow: proj.Allow, Ask: proj.Ask, Deny: proj.Deny},
		CLI:            cli,
		ProjectTrusted: e.Config.ProjectTrusted, Headless: headless,
		ConfigDir: filepath.Dir(e.Paths.UserConfig), DataDir: e.DataDir, Private: e.private(), Writer: grants,
		// The gate lets a command run without a person's yes only as far
		// as the OS sandbox makes its analysis true: with less than full
		// enforcement it auto-allows only commands whose every option it
		// knows.
		Enforcement: enforcement(sandbox.Probe()), Network: e.Config.Sandbox.Network,
		Hooks: ph,
	})
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	return g, nil
}

// enforcement maps what the machine's sandbox can do to what the gate may
// count on.
func enforcement(st sandbox.Status) permission.Enforcement {
	switch {
	case st.Full:
		return permission.EnforcementFull
	case st.Kind == sandbox.KindLandlock:
		return permission.EnforcementPartial
	}
	return permission.EnforcementNone
}

// private are kz's own files besides its config and data directories that
// no command sees and no tool reads for a model (permission.Options.Private):
// the log, and the default data directory when --data-dir names another.
// The rest of the state directory is not hidden: it holds the agents'
// homes, which they must write.
func (e *Env) private() []string {
	p := logging.Paths(e.Paths.StateDir)
	if e.Paths.DataDir != e.DataDir {
		p = append(p, e.Paths.DataDir)
	}
	return p
}

// hidden is what the OS sandbox hides from every command: kz's own config
// and data directories and its private files, which the gate keeps from
// kz's own tools too (permission.Options), and what Read deny rules name:
// the gate cannot stop `grep -r x .` from reading a denied directory below
// ".", the kernel can.
func (e *Env) hidden(gate *permission.Gate) []string {
	h := append([]string{filepath.Dir(e.Paths.UserConfig), e.DataDir}, e.private()...)
	return append(h, gate.ReadDenyRoots(e.Workspace)...)
}

// osSandbox builds the session's OS sandbox: the workspace and the
// configured writable directories ([sandbox] writable) are what
// workspace-write commands may write; kz's own config and data
// directories, and the paths Read deny rules name, are hidden from every
// command; the search of the writable directories is kept in the data
// directory between kz processes. A one-shot session (kz -p) does not
// watch the searched directories.
func (e *Env) osSandbox(gate *permission.Gate, oneShot bool) (*sandbox.Sandbox, error) {
	// The search for what to protect is kept in kz's data directory,
	// which is hidden from every command, for the next kz.
	sb, err := sandbox.New(sandbox.Policy{Workspace: e.Workspace, Writable: e.Config.Sandbox.Writable, Hidden: e.hidden(gate),
		SearchCache: filepath.Join(e.DataDir, "sandbox"), NoWatch: oneShot})
	if err != nil && len(e.Config.Sandbox.Writable) > 0 {
		return nil, fmt.Errorf("%w (check [sandbox] writable in %s)", err, e.Paths.UserConfig)
	}
	if err == nil && sb != nil && e.hooks != nil {
		// Hooks run in the sandbox of the session's commands.
		e.hooks.SetStarter(sandboxStarter{sb: sb, network: e.Config.Sandbox.Network})
	}
	return sb, err
}
