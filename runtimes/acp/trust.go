package acp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/tools/mcp"
)

// Gemini CLI treats its workspace as "trusted" when the person disabled
// its folder trust, trusted the folder in its own dialog, or its
// GEMINI_CLI_TRUST_WORKSPACE variable says so, and a trusted workspace's
// own configuration then runs code with nobody asked, kz's gate included
// (read in Gemini CLI 0.61's settings and trust code, and checked with the
// real CLI in TestRealGeminiProjectConfigNeverRuns):
//
//   - .gemini/settings.json: mcpServers and mcp.serverCommand (servers it
//     starts), tools.discoveryCommand and tools.callCommand (programs run at
//     start and for each call), hooks (commands run on its events),
//     tools.sandbox (the command it relaunches itself under),
//     general.defaultApprovalMode, tools.allowed and policyPaths (tool calls
//     approved without asking anyone), context.includeDirectories (reads
//     outside the workspace);
//   - .gemini/policies/*.toml: policy rules that allow tool calls;
//   - .gemini/.env, in the workspace or any directory above it, and the
//     first .env above it: every variable they set joins the agent's
//     environment and so every command it runs (BASH_ENV, LD_PRELOAD,
//     NODE_OPTIONS run code in each);
//   - .gemini/commands, .gemini/agents, .gemini/skills: prompts, subagents
//     (which may name their own MCP servers) and skills of the project.
//
// Only Gemini's system settings outrank the workspace's, and Gemini reads
// those only from a file root owns, which kz cannot write. Hiding the
// directory needs a mount namespace, which not every machine kz runs on
// gives. So kz decides the trust itself, with the variable that outranks
// Gemini's own trust file and setting: the workspace is trusted only when
// it holds none of that configuration, and then Gemini has nothing of the
// project's to run (.env files are not read either: the overlay home's
// settings set advanced.ignoreLocalEnv). A workspace that holds some is
// untrusted: Gemini ignores all of it, and also every MCP server, kz's
// own included, since it starts none in an untrusted folder. kz then
// withholds its servers and says why; the project's servers belong in
// kz's own [mcp.servers], which start only after kz trust.

// geminiTrustVar is Gemini CLI's variable that decides the workspace's
// trust before its trusted-folders file and its folderTrust setting.
const geminiTrustVar = "GEMINI_CLI_TRUST_WORKSPACE"

// geminiProjectConfig lists the configuration of the workspace dir that
// Gemini CLI would load in a trusted workspace and that could run a
// program or loosen its approvals (see above): the workspace's .gemini
// directory, a .gemini/.env of any directory above it, and, when the agent
// reads local .env files (localEnv), every .env from dir up. The person's
// home is skipped: its .gemini and .env are the person's own settings,
// not the project's. A path kz cannot inspect is listed too: kz does not
// trust what it could not see.
func geminiProjectConfig(dir string, env []string, localEnv bool) []string {
	home := childenv.Lookup(env, "HOME")
	var found []string
	check := func(p string) {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			found = append(found, p)
		}
	}
	d := filepath.Clean(dir)
	if !filepath.IsAbs(d) {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
	}
	for first := true; ; first = false {
		if home == "" || !samePath(d, home) {
			if first {
				check(filepath.Join(d, geminiDir))
			} else {
				check(filepath.Join(d, geminiDir, ".env"))
			}
			if localEnv {
				check(filepath.Join(d, ".env"))
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return found
		}
		d = parent
	}
}

// samePath reports whether a and b name the same directory, symbolic links
// resolved where they can be.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// workspaceTrust is what kz told one agent process about its workspace.
type workspaceTrust struct {
	// decided says the agent has a trust variable kz set; false leaves
	// the agent's own trust rules (and every other field unused).
	decided bool
	// trusted is the value kz set.
	trusted bool
	// found is the project configuration that made kz withhold trust.
	found []string
}

// untrusted reports whether kz told the agent not to trust its workspace.
func (w workspaceTrust) untrusted() bool { return w.decided && !w.trusted }

// noticeWithheldMCP tells the person, once per agent process, that kz's
// MCP servers were not handed to an agent kept untrusted, and why.
func (tr *turnRun) noticeWithheldMCP() {
	a := tr.a
	if !a.trust.untrusted() || a.noticed || len(mcp.Runnable(tr.rt.cfg.MCPServers)) == 0 {
		return
	}
	a.noticed = true
	tr.t.Emit(engine.Event{Type: engine.EventError, ErrorKind: engine.ErrCapability, Text: fmt.Sprintf(
		"%s runs without kz's MCP servers here: this workspace holds %s's own configuration (%s), which it would run if kz let it trust the workspace, "+
			"and it starts no MCP server in a workspace it does not trust. Move what you need of it into kz's [mcp.servers] and remove it, or use another runtime for MCP tools.",
		tr.rt.cfg.Name, tr.rt.cfg.Name, strings.Join(a.trust.found, ", "))})
}

// decideTrust sets the agent's trust variable in env for a process in dir:
// trusted only when the workspace holds no configuration of the agent's
// own that it would run (geminiProjectConfig). localEnv says the agent
// reads local .env files (it has no overlay home that turns them off).
func (r *Runtime) decideTrust(dir string, env []string, localEnv bool) ([]string, workspaceTrust) {
	if r.cfg.TrustVar == "" || r.cfg.ProjectConfig == nil {
		return env, workspaceTrust{}
	}
	found := r.cfg.ProjectConfig(dir, env, localEnv)
	w := workspaceTrust{decided: true, trusted: len(found) == 0, found: found}
	if !w.trusted {
		r.log.Warn("acp: the workspace holds the agent's own configuration, which it would run: it runs untrusted, without kz's MCP servers",
			"found", found)
	}
	return append(childenv.Strip(env, r.cfg.TrustVar), r.cfg.TrustVar+"="+strconv.FormatBool(w.trusted)), w
}
