package permission

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/shell"
)

// interpreters run inline code given with the listed flags; in
// patch-proposal mode that code could write files unseen. The map is built
// on first use, so that every kz process does not pay for it at start.
var interpreters = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"python": {"-c"}, "python3": {"-c"}, "python2": {"-c"}, "pypy": {"-c"}, "pypy3": {"-c"},
		"node": {"-e", "--eval", "-p", "--print"}, "nodejs": {"-e", "--eval", "-p", "--print"},
		"perl": {"-e", "-E", "-i"}, "ruby": {"-e", "-i"}, "php": {"-r"}, "lua": {"-e"},
		"deno": {"eval"}, "bun": {"-e", "--eval"}, "osascript": {"-e"}, "tclsh": {}, "Rscript": {"-e"},
	}
})

func inlineInterpreter(c shell.Command) bool {
	flags, ok := interpreters()[filepath.Base(c.Name)]
	if !ok {
		return false
	}
	for _, a := range c.Args {
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f) && len(f) == 2 && !strings.HasPrefix(a, "--") {
				return true
			}
		}
	}
	return false
}

// modePolicy applies the session mode: analysis-only runs only provably
// read-only commands and writes nothing; patch-proposal changes files only
// through proposals (apply_patch), never through the shell.
func (e *eval) modePolicy() StageResult {
	deny := func(reason string) StageResult {
		return StageResult{Stage: StageMode, Decision: engine.DecisionDeny, Reason: reason}
	}
	if r, ok := e.mcpModePolicy(); ok {
		return r
	}
	if e.spec != nil && e.q.Mode != engine.ModeFullAutonomous {
		switch {
		case e.spec.Class == ClassWrite || e.spec.Class == ClassExecute:
			return deny(fmt.Sprintf("%s mode: %s %s, which this mode does not allow", e.q.Mode, e.spec.Name, e.spec.Does))
		case e.spec.Name == "ExitPlanMode" && e.q.Mode == engine.ModeAnalysisOnly:
			return deny("kz keeps this session in analysis-only mode: present the plan as text")
		}
	}
	switch e.q.Mode {
	case engine.ModeAnalysisOnly:
		if e.kind == KindBash {
			if !e.an.ReadOnly() {
				return deny("analysis-only mode runs only shell commands proven read-only; " + e.notReadOnly() + " is not")
			}
		} else if e.write {
			return deny("analysis-only mode allows no writes")
		}
	case engine.ModePatchProposal:
		if e.kind == KindBash {
			for _, c := range e.an.Commands {
				if c.Writes {
					return deny("patch-proposal mode changes files only through proposals; `" + c.String() + "` writes")
				}
				if inlineInterpreter(c) {
					return deny("patch-proposal mode: inline interpreter code could write files (`" + c.String() + "`)")
				}
			}
			for _, t := range e.tgts {
				if t.Op != shell.OpRead && !shell.IsHarmlessDevice(t.Path) {
					return deny("patch-proposal mode changes files only through proposals; the command writes " + t.Path)
				}
			}
		} else if e.write && !engine.IsProposal(e.q.Request) {
			return deny("patch-proposal mode changes files only through proposals")
		}
	}
	return StageResult{Stage: StageMode}
}

// capability denies a tool the runtime declares it cannot use. A runtime
// that declares no capabilities at all is not judged here.
func (e *eval) capability() StageResult {
	set := e.q.Capabilities.Set
	if set == 0 || engine.IsProposal(e.q.Request) {
		return StageResult{Stage: StageCapability}
	}
	var need engine.Capability
	switch {
	case e.kind == KindBash:
		need = engine.CapShell
	case e.kind == KindEdit || e.kind == KindWrite:
		need = engine.CapFilesystemEdit
	case e.kind == KindRead:
		need = engine.CapFilesystemRead
	case strings.HasPrefix(e.q.Request.Tool, "mcp__"):
		need = engine.CapMCP
	case e.spec != nil && e.spec.Class == ClassSubagent:
		need = engine.CapSubagents
	default:
		return StageResult{Stage: StageCapability}
	}
	if !e.q.Capabilities.Has(need) {
		return StageResult{Stage: StageCapability, Decision: engine.DecisionDeny,
			Reason: fmt.Sprintf("runtime %s lacks the %s capability that %s needs", e.q.Runtime, need, e.q.Request.Tool)}
	}
	return StageResult{Stage: StageCapability}
}

// allowStage decides between allow and ask: allow rules and grants, the
// permission mode, and kz's defaults (reads inside the workspace and
// provably read-only commands run without asking).
func (e *eval) allowStage() StageResult {
	allow := func(rule, reason string) StageResult {
		return StageResult{Stage: StageAllow, Decision: engine.DecisionAllow, Rule: rule, Reason: reason}
	}
	ask := func(reason string) StageResult {
		return StageResult{Stage: StageAllow, Decision: engine.DecisionAsk, Reason: reason}
	}
	pm := e.q.PermissionMode
	e.g.mu.RLock()
	grants := e.g.grants
	defer e.g.mu.RUnlock()

	switch {
	case e.kind == KindBash:
		if !e.an.Provable() {
			return ask("the command cannot be fully analysed")
		}
		rule, missing, missingReadOnly := "", "", false
		for i, c := range e.an.Commands {
			if r := e.allowedCommand(i, grants); r != "" {
				if rule == "" {
					rule = r
				}
				continue
			}
			// Name the sub-command that decides: in `ls && rm -rf build`
			// that is rm, not the read-only ls before it.
			if missing == "" || !c.ReadOnly && missingReadOnly {
				missing = "`" + c.String() + "` is not allowed by any rule"
				missingReadOnly = c.ReadOnly
			}
			if !c.ReadOnly {
				break
			}
		}
		if missing == "" {
			for _, t := range e.tgts {
				if t.Op == shell.OpRead || shell.IsHarmlessDevice(t.Path) {
					continue
				}
				if r := e.allowedWrite(t, grants); r == "" {
					missing = "writing " + t.Path + " is not allowed by any rule"
					break
				}
			}
		}
		switch {
		case missing == "" && len(e.an.Commands) > 0:
			return allow(rule, "every sub-command and write target is allowed")
		case pm == engine.PermissionYolo:
			return allow("", "permission mode yolo")
		case missing != "" && e.an.ReadOnly():
			if why := e.suspiciousArg(); why != "" {
				return ask(why)
			}
			if c, ok := e.unvouched(); !ok {
				return ask(fmt.Sprintf("%s, so only a short list of commands with known options runs without asking; `%s` is not on it",
					e.g.opts.Enforcement.why(), c))
			}
			e.readOnlyAllow = true
			return allow("", "the command is proven read-only and stays in the workspace")
		case missing == "":
			missing = "the command runs nothing"
		}
		return ask(missing)
	case !e.write && e.kind == KindRead:
		inside := true
		for _, t := range e.tgts {
			if t.resolved == "" || !within(e.ws, t.resolved) {
				inside = false
			}
		}
		if inside {
			return allow("", "reading inside the workspace")
		}
		if r := e.allowedRead(grants); r != "" {
			return allow(r, "allowed by rule")
		}
		if pm == engine.PermissionYolo {
			return allow("", "permission mode yolo")
		}
		return ask("reading outside the workspace")
	case e.write:
		rule := ""
		for _, t := range e.tgts {
			r := e.allowedWrite(t, grants)
			if r == "" {
				rule = ""
				break
			}
			if rule == "" {
				rule = r
			}
		}
		if rule != "" && len(e.tgts) > 0 {
			return allow(rule, "every path is allowed")
		}
		if pm == engine.PermissionYolo || pm == engine.PermissionAcceptEdits {
			return allow("", "permission mode "+string(pm))
		}
		return ask("ask before " + e.q.Request.Tool + " writes " + e.pathList())
	}
	if e.kind == KindWebFetch {
		return e.fetchAllowStage(grants)
	}
	if grants["tool:"+e.q.Request.Tool] {
		return allow("session grant", "granted for this session")
	}
	for _, r := range e.rules {
		if r.Action == ActionAllow && e.applies(r) && (e.kind != KindWebFetch || e.matchFetch(r)) {
			return allow(r.String(), "allowed by rule")
		}
	}
	if pm == engine.PermissionYolo {
		return allow("", "permission mode yolo")
	}
	if e.spec != nil {
		return e.specDecision()
	}
	if e.isMCP() {
		return e.mcpDefault()
	}
	return ask("ask before running " + e.q.Request.Tool + ": kz does not know what this tool does")
}

// specDecision answers a tool with a declared spec that no rule, grant or
// permission mode decided.
func (e *eval) specDecision() StageResult {
	s := e.spec
	res := StageResult{Stage: StageAllow, Decision: s.Class.defaultDecision()}
	switch s.Class {
	case ClassSubagent:
		res.Reason = s.Name + " " + s.Does + "; each of its tool calls passes this gate"
	case ClassReadOnly, ClassSession:
		res.Reason = s.Name + " " + s.Does + " and changes nothing else"
	case ClassNetwork:
		res.Reason = s.Name + " " + s.Does + ", which kz cannot confine; allow it with a rule such as `" + s.Name + "`"
	case ClassInteraction:
		res.Reason = s.Name + " " + s.Does + "; only the person can answer"
	case ClassExecute:
		res.Reason = s.Name + " " + s.Does + " that do not pass this gate"
	default:
		res.Reason = s.Name + " " + s.Does
	}
	return res
}

func (e *eval) pathList() string {
	var ps []string
	for _, t := range e.tgts {
		ps = append(ps, t.Path)
	}
	return strings.Join(ps, ", ")
}

// allowedCommand returns the rule or grant allowing c, or "". Allow rules
// need a bare program name, and never allow privileged commands.
func (e *eval) allowedCommand(i int, grants map[string]bool) string {
	c := e.an.Commands[i]
	if c.Privileged || strings.Contains(c.Name, "/") {
		return ""
	}
	if !c.HasDynamic() && grants["bash:"+c.String()] {
		return "session grant `" + c.String() + "`"
	}
	for _, r := range e.rules {
		if r.Action == ActionAllow && r.Kind == KindBash && e.ruleMatch(r, i, true) == match {
			return r.String()
		}
	}
	return ""
}

// allowedWrite returns the rule, grant or mode allowing a write to t.
func (e *eval) allowedWrite(t target, grants map[string]bool) string {
	if t.resolved == "" || t.err != nil {
		return ""
	}
	if grants["write:"+t.resolved] {
		return "session grant " + t.resolved
	}
	for _, r := range e.rules {
		if r.Action == ActionAllow && (r.Kind == KindEdit || r.Kind == KindWrite) &&
			(r.matchesAll() || matchPath(pathPattern(r.Spec, e.ws, e.home), t.resolved)) {
			return r.String()
		}
	}
	if within(e.ws, t.resolved) && e.kind == KindBash &&
		(e.q.PermissionMode == engine.PermissionAcceptEdits || e.q.PermissionMode == engine.PermissionYolo) {
		// Shell redirects inside the workspace count as edits; the
		// commands themselves still need rules in accept-edits.
		return "permission mode " + string(e.q.PermissionMode)
	}
	return ""
}

func (e *eval) allowedRead(grants map[string]bool) string {
	rule := ""
	for _, t := range e.tgts {
		found := ""
		if grants["read:"+t.resolved] {
			found = "session grant " + t.resolved
		}
		for _, r := range e.rules {
			if found == "" && r.Action == ActionAllow && r.Kind == KindRead && t.resolved != "" &&
				(r.matchesAll() || matchPath(pathPattern(r.Spec, e.ws, e.home), t.resolved)) {
				found = r.String()
			}
		}
		if found == "" {
			return ""
		}
		if rule == "" {
			rule = found
		}
	}
	return rule
}

// suspiciousArg returns why a literal argument names a path outside the
// workspace or a secret, naming the command and the argument, or "": a
// read-only command reading it is not run without asking.
func (e *eval) suspiciousArg() string {
	for _, c := range e.an.Commands {
		for i, a := range c.Args {
			if c.IsDynamic(i) && strings.ContainsAny(a, "$`") {
				return "`" + c.String() + "` reads a path held in a variable, which may name any file"
			}
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
				a = v
			}
			if a == "" || shell.IsHarmlessDevice(a) {
				continue
			}
			if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || a == ".." || strings.HasPrefix(a, "../") || strings.Contains(a, "/../") || strings.HasSuffix(a, "/..") {
				return "`" + c.String() + "` names " + a + ", which may be outside the workspace"
			}
			if isCredential(strings.ToLower(filepath.Base(a))) || hasCredDir(strings.ToLower(a)) {
				return "`" + c.String() + "` names a secret: " + a
			}
			if c.IsDynamic(i) {
				// A glob: its literal parts were checked above.
				continue
			}
			if r, err := resolvePath(e.ws, a, e.home); err == nil && !within(e.ws, r) {
				// A symlink inside the workspace may point out of it.
				return "`" + c.String() + "` names " + a + ", which resolves outside the workspace"
			}
		}
	}
	return ""
}

func hasCredDir(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if credDirs[c] {
			return true
		}
	}
	return false
}

// ErrNotGrantable is returned by Remember for requests that cannot be
// scoped to a normalised command or path.
var ErrNotGrantable = errors.New("the request cannot be remembered")

// Remember implements engine.Gate: "allow for session" records grants
// keyed by each normalised sub-command and exact resolved path — never a
// whole tool, never a pattern; "always allow" also persists exact rules
// through the RuleWriter. A request that a deny rule, a safety check, the
// mode or the capability stage denies is never remembered.
func (g *Gate) Remember(ctx context.Context, q engine.GateQuery, scope engine.AnswerScope) error {
	if scope != engine.ScopeSession && scope != engine.ScopeAlways {
		return nil
	}
	rep := g.Evaluate(ctx, q)
	for _, s := range rep.Stages {
		if s.Decision == engine.DecisionDeny && s.Stage != StagePermissionMode && s.Stage != StageHeadless {
			return fmt.Errorf("%w: %s denies it: %s", ErrNotGrantable, s.Stage, s.Reason)
		}
	}
	e := g.prepare(q)
	keys, rules, err := e.grantsFor()
	if err != nil {
		return err
	}
	g.mu.Lock()
	for _, k := range keys {
		g.grants[k] = true
	}
	g.mu.Unlock()
	if scope != engine.ScopeAlways {
		return nil
	}
	if g.opts.Writer == nil {
		return fmt.Errorf("always allow: no config writer; granted for this session only")
	}
	var errs []error
	for _, s := range rules {
		r, err := ParseRule(s, ActionAllow, SourceAlways)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := g.opts.Writer.AddAllowRule(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("persist %s: %w", s, err))
			continue
		}
		g.mu.Lock()
		g.rules = append(g.rules, r)
		g.mu.Unlock()
	}
	return errors.Join(errs...)
}

// grantsFor returns the session keys and the persistable rules for e.
func (e *eval) grantsFor() (keys, rules []string, err error) {
	switch {
	case e.kind == KindBash:
		if !e.an.Provable() || len(e.an.Steering) > 0 {
			return nil, nil, fmt.Errorf("%w: the command cannot be fully analysed", ErrNotGrantable)
		}
		for _, c := range e.an.Commands {
			if c.Privileged || c.HasDynamic() || strings.Contains(c.Name, "/") {
				continue
			}
			s := c.String()
			keys = append(keys, "bash:"+s)
			if !strings.Contains(s, "*") {
				rules = append(rules, "Bash("+s+")")
			}
		}
		for _, t := range e.tgts {
			if t.Op != shell.OpRead && t.resolved != "" && !shell.IsHarmlessDevice(t.Path) {
				keys = append(keys, "write:"+t.resolved)
				if r := e.pathRule(KindEdit, t.resolved); r != "" {
					rules = append(rules, r)
				}
			}
		}
	case e.kind == KindWebFetch:
		return e.fetchGrantKeys()
	case e.kind == KindRead || e.write:
		prefix, kind := "read:", KindRead
		if e.write {
			prefix, kind = "write:", KindEdit
		}
		for _, t := range e.tgts {
			if t.resolved == "" {
				continue
			}
			keys = append(keys, prefix+t.resolved)
			if r := e.pathRule(kind, t.resolved); r != "" {
				rules = append(rules, r)
			}
		}
	default:
		keys = append(keys, "tool:"+e.q.Request.Tool)
		rules = append(rules, e.q.Request.Tool)
	}
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf("%w: nothing to scope the grant to", ErrNotGrantable)
	}
	return keys, rules, nil
}

// pathRule renders an exact path rule relative to the workspace.
func (e *eval) pathRule(kind Kind, resolved string) string {
	rel, err := filepath.Rel(e.ws, resolved)
	if err != nil || !within(e.ws, resolved) || strings.ContainsAny(rel, "*?[()") {
		return ""
	}
	return string(kind) + "(./" + filepath.ToSlash(rel) + ")"
}

// notReadOnly names the first sub-command the analysis could not prove
// read-only, for reasons; a write by redirection names its target.
func (e *eval) notReadOnly() string {
	for _, c := range e.an.Commands {
		if !c.ReadOnly {
			return "`" + c.String() + "`"
		}
	}
	for _, t := range e.tgts {
		if t.Op != shell.OpRead && !shell.IsHarmlessDevice(t.Path) {
			return "the write to " + t.Path
		}
	}
	return "the command"
}
