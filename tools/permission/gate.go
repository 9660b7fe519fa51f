// Package permission is kz's PermissionGate: every tool call from every
// runtime passes one pipeline — deny rules, ask rules, tool-specific
// validation, bypass-immune safety checks, mode policy, runtime capability,
// then allow/ask — and the final decision is the most restrictive of all
// stages. The gate only judges; it never executes or touches files other
// than reading metadata (lstat, readlink, .git files) to resolve paths.
package permission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/shell"
)

// Stage names a pipeline stage in a verdict.
type Stage string

// Pipeline stages, in order.
const (
	StageDenyRule       Stage = "deny_rule"
	StageAskRule        Stage = "ask_rule"
	StageValidation     Stage = "validation"
	StageSafety         Stage = "safety"
	StageMode           Stage = "mode"
	StageCapability     Stage = "capability"
	StageAllow          Stage = "allow"
	StagePermissionMode Stage = "permission_mode"
	StageHeadless       Stage = "headless"
)

// RuleWriter persists "always allow" answers (the user config). The
// consumer of the gate implements it.
type RuleWriter interface {
	AddAllowRule(ctx context.Context, rule string) error
}

// Options configure a Gate.
type Options struct {
	// Rules by source. Project allow rules are ignored unless
	// ProjectTrusted: an untrusted project can only add restrictions.
	User, Project, CLI Rules
	ProjectTrusted     bool
	// Headless turns every remaining ask into a deny, with a reason: no
	// one is there to answer.
	Headless bool
	// Home is the user's home directory (default os.UserHomeDir).
	Home string
	// ConfigDir and DataDir are kz's own directories
	// ($XDG_CONFIG_HOME/kz, $XDG_DATA_HOME/kz), and Private kz's other
	// files a model must not see (its log). They are what the OS sandbox
	// hides from every command, and the gate holds every tool to the
	// same when the workspace contains them (kz run in the home
	// directory): writes there are refused, a tool's read asks as a
	// secret's does, a command's read is refused, and a search leaves
	// them out. They hold every session's history, the person's grants
	// and settings, and keys.
	ConfigDir, DataDir string
	Private            []string
	// Writer persists "always allow" grants; nil makes them session-only
	// and Remember returns an error saying so.
	Writer RuleWriter
	// Enforcement is what the machine's OS sandbox enforces (from
	// tools/sandbox.Probe()). Unless it is full, commands the analysis
	// proves read-only run without asking only when they are on a short
	// list of programs whose every option is known; the zero value is
	// none.
	Enforcement Enforcement
	// Hooks runs the person's PreToolUse hooks as the hook stage of Check
	// and Judge; nil runs none.
	Hooks PreToolHooks
	// Network lets commands that run under the workspace-write profile
	// (allowed by a rule, a grant, yolo or the person) reach the network:
	// config `[sandbox] network`, true by default there. Read-only
	// commands never get the network.
	Network bool
}

// Gate implements engine.Gate. It is safe for concurrent use.
type Gate struct {
	opts          Options
	home          string
	protectedDirs []string
	// homeCreds are HomeCredentialPaths below home, absolute, and homeDot
	// the prefix every one of them has (home + "/.").
	homeCreds []string
	homeDot   string

	mu      sync.RWMutex
	rules   []Rule
	grants  map[string]bool
	wsCache map[string]string
	// mcpReadOnly says which MCP tools are read-only (SetMCPReadOnly). It
	// is atomic, not under mu, because the stages ask it while holding mu.
	mcpReadOnly atomic.Pointer[func(tool string) bool]
}

var _ engine.Gate = (*Gate)(nil)

// New builds a gate; a malformed rule is an error naming it.
func New(opts Options) (*Gate, error) {
	g := &Gate{opts: opts, grants: map[string]bool{}, wsCache: map[string]string{}}
	g.home = opts.Home
	if g.home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			g.home = h
		}
	}
	if g.home != "" {
		if r, err := filepath.EvalSymlinks(g.home); err == nil {
			g.home = r
		}
	}
	if g.home != "" {
		g.homeDot = strings.TrimSuffix(g.home, "/") + "/."
		for _, rel := range HomeCredentialPaths() {
			if strings.HasPrefix(rel, ".") {
				// The others (credentials.json) are credentials by their
				// name wherever they are.
				g.homeCreds = append(g.homeCreds, filepath.Join(g.home, rel))
			}
		}
	}
	for _, d := range append([]string{opts.ConfigDir, opts.DataDir}, opts.Private...) {
		if d == "" {
			continue
		}
		if r, err := resolvePath("/", d, g.home); err == nil {
			g.protectedDirs = append(g.protectedDirs, r)
		}
	}
	for _, src := range []struct {
		rs Rules
		s  Source
	}{{opts.User, SourceUser}, {opts.CLI, SourceCLI}, {opts.Project, SourceProject}} {
		rs := src.rs
		if src.s == SourceProject && !opts.ProjectTrusted {
			rs.Allow = nil
		}
		parsed, err := parseRules(rs, src.s)
		if err != nil {
			return nil, err
		}
		g.rules = append(g.rules, parsed...)
	}
	return g, nil
}

// Rules returns the active rules.
func (g *Gate) Rules() []Rule {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return append([]Rule(nil), g.rules...)
}

// StageResult is one stage's opinion. An empty Decision means the stage
// had nothing to say.
type StageResult struct {
	Stage    Stage           `json:"stage"`
	Decision engine.Decision `json:"decision,omitempty"`
	Rule     string          `json:"rule,omitempty"`
	Reason   string          `json:"reason,omitempty"`
}

// Report is the full evaluation of a request: the verdict, every stage's
// opinion and, for shell commands, the parsed sub-commands.
type Report struct {
	Decision    engine.Decision `json:"decision"`
	Stage       Stage           `json:"stage"`
	Rule        string          `json:"rule"`
	Reason      string          `json:"reason"`
	Tool        string          `json:"tool"`
	Kind        Kind            `json:"kind"`
	Subcommands []string        `json:"subcommands"`
	Targets     []TargetReport  `json:"targets,omitempty"`
	Unprovable  []string        `json:"unprovable,omitempty"`
	Stages      []StageResult   `json:"stages"`
	// Grants, when the decision is ask, are the rules "always allow"
	// would save for this request (see Remember); none when it cannot be
	// granted for good.
	Grants []string `json:"grants,omitempty"`
	// Class is the declared class of a tool whose input the gate does not
	// read (Task, WebSearch, ...).
	Class ToolClass `json:"class,omitempty"`
	// Confinement is the OS sandbox profile a shell command runs under
	// (on an ask, once the person says yes); empty for other tools.
	Confinement engine.Confinement `json:"confinement,omitzero"`
}

// TargetReport is a path the request touches, as written and resolved.
type TargetReport struct {
	Path     string `json:"path"`
	Resolved string `json:"resolved,omitempty"`
	Op       string `json:"op"`
	By       string `json:"by,omitempty"`
}

// Verdict converts the report to the engine's verdict.
func (r Report) Verdict() engine.Verdict {
	return engine.Verdict{Decision: r.Decision, Stage: string(r.Stage), Rule: r.Rule, Reason: r.Reason, Grants: r.Grants,
		Confinement: r.Confinement}
}

// Prepare builds what the gate's first check of a command would otherwise
// wait for: the models of shell commands (shell.Prepare). A session calls
// it in the background once a runtime reports its session started.
func (g *Gate) Prepare() { shell.Prepare() }

// Check implements engine.Gate.
func (g *Gate) Check(ctx context.Context, q engine.GateQuery) engine.Verdict {
	return g.Judge(ctx, q).Verdict()
}

// target is a path with its resolution.
type target struct {
	shell.Target
	resolved string
	err      error
	// file is set for a file tool's own path (as opposed to a shell target).
	file bool
}

// eval carries one evaluation.
type eval struct {
	g     *Gate
	q     engine.GateQuery
	kind  Kind
	ws    string
	home  string
	an    *shell.Analysis
	tgts  []target
	rules []Rule
	// write says the request changes files (file tool writes).
	write bool
	// spec is the declared spec of a tool whose input the gate does not
	// read, or nil.
	spec *ToolSpec
	// readOnlyAllow records that the allow stage allowed a shell command
	// because the analysis proved it read-only (no rule, grant or mode).
	readOnlyAllow bool
	// parses are the analysis' commands parsed with their programs'
	// models, as rules need them (see parsedCommand).
	parses []*shell.Parsed
	// hosts are a fetch's normalised hosts (see fetchHosts).
	hosts     []string
	hostsErr  error
	hostsDone bool
}

// Evaluate runs the whole pipeline but the hooks, and reports every
// stage. It starts no process: Remember and the patch applier's path
// guard use it to ask what the rules and checks say.
func (g *Gate) Evaluate(ctx context.Context, q engine.GateQuery) Report {
	return g.evaluate(ctx, q, false)
}

// evaluate runs the pipeline, with the hook stage when hooks is set and
// the gate has hooks.
func (g *Gate) evaluate(ctx context.Context, q engine.GateQuery, hooks bool) Report {
	e := g.prepare(q)
	rep := Report{Tool: q.Request.Tool, Kind: e.kind, Subcommands: []string{}}
	if e.an != nil {
		for _, c := range e.an.Commands {
			rep.Subcommands = append(rep.Subcommands, c.String())
		}
		rep.Unprovable = e.an.Unprovable
	}
	for _, t := range e.tgts {
		rep.Targets = append(rep.Targets, TargetReport{Path: t.Path, Resolved: t.resolved, Op: string(t.Op), By: t.By})
	}
	rep.Stages = []StageResult{
		e.ruleStage(ActionDeny),
		e.ruleStage(ActionAsk),
		e.validation(),
		e.safety(),
		e.modePolicy(),
		e.capability(),
		e.allowStage(),
	}
	if hooks && g.opts.Hooks != nil {
		rep.Stages = withHook(rep.Stages, e.hookStage(ctx))
	}
	if err := ctx.Err(); err != nil {
		rep.Stages = append(rep.Stages, StageResult{Stage: StageValidation, Decision: engine.DecisionDeny, Reason: "cancelled: " + err.Error()})
	}
	final := engine.DecisionAllow
	for _, s := range rep.Stages {
		if s.Decision != "" {
			final = final.Stricter(s.Decision)
		}
	}
	for _, s := range rep.Stages {
		if s.Decision == final {
			rep.Decision, rep.Stage, rep.Rule, rep.Reason = final, s.Stage, s.Rule, s.Reason
			break
		}
	}
	if rep.Decision == "" {
		// No stage allowed explicitly: fail closed.
		rep.Decision, rep.Stage, rep.Reason = engine.DecisionAsk, StageAllow, "nothing allowed this request"
	}
	if rep.Decision == engine.DecisionAsk {
		switch {
		case q.PermissionMode == engine.PermissionDeny:
			s := StageResult{Stage: StagePermissionMode, Decision: engine.DecisionDeny, Rule: rep.Rule,
				Reason: rep.Reason + "; permission mode deny answers every question with deny"}
			rep.Stages = append(rep.Stages, s)
			rep.Decision, rep.Stage, rep.Reason = s.Decision, s.Stage, s.Reason
		case g.opts.Headless:
			s := StageResult{Stage: StageHeadless, Decision: engine.DecisionDeny, Rule: rep.Rule,
				Reason: rep.Reason + "; headless, no one can answer, so the request is denied (allow it with a rule or --permission-mode)"}
			rep.Stages = append(rep.Stages, s)
			rep.Decision, rep.Stage, rep.Reason = s.Decision, s.Stage, s.Reason
		}
	}
	if rep.Decision == engine.DecisionAsk {
		if _, rules, err := e.grantsFor(); err == nil {
			rep.Grants = rules
		}
	}
	rep.Confinement = e.confinement(rep.Decision)
	if e.spec != nil {
		rep.Class = e.spec.Class
	}
	return rep
}

// prepare analyses the request: kind, shell analysis, resolved targets.
func (g *Gate) prepare(q engine.GateQuery) *eval {
	e := &eval{g: g, q: q, kind: KindOf(q.Request.Tool), home: g.home}
	if q.Request.Command != "" && e.kind != KindBash && q.Request.Tool == "" {
		e.kind = KindBash
	}
	ws := q.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	e.ws = g.resolveWorkspace(ws)
	g.mu.RLock()
	e.rules = g.rules
	g.mu.RUnlock()
	e.write = q.Request.Write || e.kind == KindEdit || e.kind == KindWrite
	if s, ok := toolSpecs()[q.Request.Tool]; ok && e.kind == Kind(q.Request.Tool) {
		e.spec = &s
	}

	if e.kind == KindBash {
		e.an = shell.Analyze(q.Request.Command)
		for _, t := range e.an.Targets {
			e.tgts = append(e.tgts, e.resolveTarget(t, false))
		}
		return e
	}
	paths := q.Request.Paths
	if len(paths) == 0 && e.kind == KindRead {
		paths = []string{"."}
	}
	op := shell.OpRead
	if e.write {
		op = shell.OpWrite
	}
	for _, p := range paths {
		e.tgts = append(e.tgts, e.resolveTarget(shell.Target{Path: p, Op: op, By: q.Request.Tool}, true))
	}
	return e
}

// resolveWorkspace returns the workspace made absolute with symlinks
// resolved, cached per workspace: it is on every check's path.
func (g *Gate) resolveWorkspace(ws string) string {
	g.mu.RLock()
	r, ok := g.wsCache[ws]
	g.mu.RUnlock()
	if ok {
		return r
	}
	r = ws
	if abs, err := filepath.Abs(r); err == nil {
		r = abs
	}
	if res, err := filepath.EvalSymlinks(r); err == nil {
		r = res
	}
	g.mu.Lock()
	if len(g.wsCache) < 64 {
		g.wsCache[ws] = r
	}
	g.mu.Unlock()
	return r
}

func (e *eval) resolveTarget(t shell.Target, file bool) target {
	out := target{Target: t, file: file}
	if t.Dynamic || hasControl(t.Path) || t.Path == "" {
		return out
	}
	if shell.IsHarmlessDevice(t.Path) {
		out.resolved = t.Path
		return out
	}
	out.resolved, out.err = resolvePath(e.ws, t.Path, e.home)
	return out
}

// applies reports whether a rule concerns this request.
func (e *eval) applies(r Rule) bool {
	switch e.kind {
	case KindBash, KindRead, KindWebFetch:
		return r.Kind == e.kind
	case KindEdit, KindWrite:
		return r.Kind == KindEdit || r.Kind == KindWrite
	}
	if e.write && (r.Kind == KindEdit || r.Kind == KindWrite) {
		return true
	}
	return r.matchToolName(e.q.Request.Tool)
}

// commandWords returns a command's words with their dynamic flags.
func commandWords(c shell.Command) ([]string, []bool) {
	words := append([]string{c.Name}, c.Args...)
	dyn := make([]bool, len(words))
	for i := range c.Args {
		dyn[i+1] = c.IsDynamic(i)
	}
	return words, dyn
}

// ruleStage applies deny or ask rules: they match if ANY sub-command,
// wrapper or target matches.
func (e *eval) ruleStage(action Action) StageResult {
	stage, decision := StageDenyRule, engine.DecisionDeny
	if action == ActionAsk {
		stage, decision = StageAskRule, engine.DecisionAsk
	}
	res := StageResult{Stage: stage}
	var maybe *Rule
	maybeWhy := ""
	for i := range e.rules {
		r := e.rules[i]
		if r.Action != action {
			continue
		}
		switch {
		case e.kind == KindBash && r.Kind == KindBash:
			m, why := e.matchShellRestrict(r)
			if m == match {
				return StageResult{Stage: stage, Decision: decision, Rule: r.String(), Reason: why}
			}
			if m == maybeMatch && maybe == nil {
				maybe, maybeWhy = &e.rules[i], why
			}
		case r.Kind == KindRead:
			m, why := e.matchReads(r)
			if m == match {
				return StageResult{Stage: stage, Decision: decision, Rule: r.String(), Reason: why}
			}
			if m == maybeMatch && maybe == nil {
				maybe, maybeWhy = &e.rules[i], why
			}
		case r.Kind == KindEdit || r.Kind == KindWrite:
			if !r.matchesAll() || e.applies(r) {
				if t := e.matchTargets(r); t != "" {
					return StageResult{Stage: stage, Decision: decision, Rule: r.String(), Reason: "the path " + t + " matches the rule"}
				}
			}
		case e.applies(r):
			why := "the tool matches the rule"
			if e.kind == KindWebFetch {
				if !e.matchFetch(r) {
					continue
				}
				if !r.matchesAll() {
					why = "the host " + strings.Join(e.hosts, ", ") + " matches the rule"
				}
			}
			return StageResult{Stage: stage, Decision: decision, Rule: r.String(), Reason: why}
		}
	}
	if maybe != nil {
		return StageResult{Stage: stage, Decision: engine.DecisionAsk, Rule: maybe.String(), Reason: maybeWhy}
	}
	return res
}

// matchShellRestrict matches a deny or ask rule against every command and
// wrapper of the analysis.
func (e *eval) matchShellRestrict(r Rule) (matchResult, string) {
	best := noMatch
	why := ""
	prog := r.programWord()
	for i, c := range e.an.Commands {
		if c.DynamicName {
			// `rm${IFS}-rf` splits into rm: judge the literal prefix.
			lit := c.Name
			if k := strings.IndexAny(lit, "$`"); k >= 0 {
				lit = lit[:k]
			}
			if prog != "" && lit != "" && filepath.Base(lit) == prog {
				return match, "the non-literal program `" + c.Name + "` starts with " + prog
			}
			continue
		}
		if m := e.ruleMatch(r, i, false); m > best {
			if m == match {
				return m, "the sub-command `" + c.String() + "` matches the rule"
			}
			best, why = m, "a non-literal word could make `"+c.String()+"` match the rule"
		}
		for _, w := range c.Wrappers {
			ww := strings.Fields(w)
			if r.matchCommand(ww, make([]bool, len(ww)), false) == match {
				return match, "the wrapper `" + w + "` matches the rule"
			}
		}
		// An unknown program may run a denied one given as an argument
		// (`nsenter … rm -rf x`); that cannot be proven harmless.
		if prog != "" && !c.ReadOnly && best == noMatch {
			for i, a := range c.Args {
				if !c.IsDynamic(i) && filepath.Base(a) == prog {
					best, why = maybeMatch, "`"+c.String()+"` may run "+prog
				}
			}
		}
	}
	return best, why
}

// matchTargets matches an Edit or Write rule against the request's write
// targets; it returns the matching path.
func (e *eval) matchTargets(r Rule) string {
	pat := pathPattern(r.Spec, e.ws, e.home)
	for _, t := range e.tgts {
		if t.resolved == "" || t.err != nil || t.Op == shell.OpRead {
			continue
		}
		if r.matchesAll() || matchPath(pat, t.resolved) {
			return t.Path
		}
	}
	return ""
}

// validation checks the request is well-formed and fully analysable.
func (e *eval) validation() StageResult {
	res := StageResult{Stage: StageValidation}
	ask := func(reason string) StageResult {
		return StageResult{Stage: StageValidation, Decision: engine.DecisionAsk, Reason: reason}
	}
	switch {
	case e.kind == KindBash:
		if strings.TrimSpace(e.q.Request.Command) == "" {
			return ask("the shell command is empty")
		}
		if !e.an.Provable() {
			return ask("the command cannot be fully analysed: " + strings.Join(e.an.Unprovable, "; "))
		}
		if len(e.an.Steering) > 0 {
			return ask("the command sets variables that make programs run other code: " + strings.Join(e.an.Steering, ", "))
		}
		for _, c := range e.an.Commands {
			if c.Privileged {
				return ask("`" + c.String() + "` runs with elevated privileges")
			}
		}
		for _, t := range e.tgts {
			if t.Dynamic && !(t.Glob && t.Op == shell.OpRead) {
				// A glob read is expanded by the safety stage.
				return ask(by(t) + " " + string(t.Op) + "s a path that is not a literal: " + t.Path)
			}
		}
		if why := e.unforeseeableLinkTarget(); why != "" {
			return ask(why)
		}
	case e.kind == KindWebFetch:
		return e.fetchValidation()
	case e.kind == KindRead || e.kind == KindEdit || e.kind == KindWrite || e.write:
		if len(e.tgts) == 0 {
			return ask("the request names no path")
		}
	}
	return res
}

// safety runs the bypass-immune checks: control characters, paths outside
// the workspace, protected paths, destructive git and catastrophic rm.
func (e *eval) safety() StageResult {
	deny := func(reason string) StageResult {
		return StageResult{Stage: StageSafety, Decision: engine.DecisionDeny, Reason: reason}
	}
	var ask *StageResult
	for _, t := range e.tgts {
		if t.Path == "" && !t.Dynamic {
			return deny("empty path")
		}
		if hasControl(t.Path) {
			return deny(fmt.Sprintf("the path %q contains control characters", t.Path))
		}
		if shell.IsHarmlessDevice(t.Path) {
			continue
		}
		writes := t.Op != shell.OpRead
		if !writes && !t.file {
			// A shell command's reads are judged by shellChecks.
			continue
		}
		if t.Op == shell.OpDelete && t.Dynamic {
			if why := catastrophicPattern(t.Path); why != "" {
				return deny(why)
			}
		}
		if t.Dynamic {
			// Only the literal directory prefix can be judged.
			if pre := staticPrefix(t.Path); writes && pre != "" {
				if r, err := resolvePath(e.ws, pre, e.home); err == nil && !within(e.ws, r) {
					return deny(by(t) + " writes below " + pre + ", outside the workspace")
				}
			}
			continue
		}
		if t.err != nil {
			return deny("cannot resolve " + t.Path + ": " + t.err.Error())
		}
		if t.Op == shell.OpDelete {
			if why := e.catastrophic(t); why != "" {
				return deny(why)
			}
		}
		if !within(e.ws, t.resolved) {
			if writes {
				return deny(by(t) + " writes " + t.Path + ", which resolves to " + t.resolved + ", outside the workspace " + e.ws)
			}
			return deny("reading " + t.Path + " (" + t.resolved + ") outside the workspace " + e.ws)
		}
		why, cred := e.protection(t.resolved)
		if why == "" {
			continue
		}
		if writes {
			return deny(by(t) + " writes " + t.Path + ": " + why)
		}
		if cred && ask == nil {
			s := StageResult{Stage: StageSafety, Decision: engine.DecisionAsk, Reason: "reading a secret: " + why}
			ask = &s
		}
	}
	if e.an != nil {
		for _, c := range e.an.Commands {
			if why := shell.Destructive(c); why != "" {
				return deny(why)
			}
			if c.ReadOnly {
				continue
			}
			// A writing git command aimed at another repository writes
			// outside the workspace. (-C is relative to the start dir; a
			// preceding cd is not applied here, which only over-denies.)
			for _, d := range shell.GitDirs(c) {
				if r, err := resolvePath(e.ws, d, e.home); err != nil || !within(e.ws, r) {
					return deny("git -C " + d + " writes outside the workspace")
				}
			}
		}
	}
	if e.an != nil {
		switch v := e.shellChecks(); v.decision {
		case engine.DecisionDeny:
			return deny(v.reason)
		case engine.DecisionAsk:
			if ask == nil {
				ask = &StageResult{Stage: StageSafety, Decision: engine.DecisionAsk, Reason: v.reason}
			}
		}
	}
	if ask == nil && e.an != nil {
		if a := e.secretArg(); a != "" {
			return StageResult{Stage: StageSafety, Decision: engine.DecisionAsk, Reason: "the command names a secret: " + a}
		}
	}
	if ask != nil {
		return *ask
	}
	return StageResult{Stage: StageSafety}
}

// secretArg returns a literal argument naming a credential file or
// directory (`~/.ssh/id_rsa`, `.env`, `x.pem`) given to a program whose
// reads the analysis does not track: whatever the rules, a command
// touching it is asked, because reading it leaks the secret.
func (e *eval) secretArg() string {
	for _, c := range e.an.Commands {
		if shell.TracksFiles(c.Name) && !strings.Contains(c.Name, "/") {
			// Its reads are targets, judged by shellChecks.
			continue
		}
		for i, a := range c.Args {
			if c.IsDynamic(i) {
				continue
			}
			v := a
			if _, after, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
				v = after
			}
			l := strings.ToLower(strings.TrimRight(v, "/"))
			if l == "" {
				continue
			}
			if isCredential(filepath.Base(l)) || hasCredDir(l) {
				return a
			}
			// Inline code (`python3 -c 'open(".env")'`, `curl -d @.env`)
			// names files inside a larger word.
			for _, tok := range strings.FieldsFunc(l, notPathByte) {
				tok = strings.TrimRight(tok, "/.")
				if tok != "" && (isCredential(filepath.Base(tok)) || hasCredDir(tok)) {
					return a
				}
			}
		}
	}
	return ""
}

// notPathByte reports a character that cannot be part of a path as code
// usually spells one.
func notPathByte(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._~/-+", r))
}

// catastrophic says why deleting t would destroy the workspace, home or
// system, or "".
func (e *eval) catastrophic(t target) string {
	if why := catastrophicPattern(t.Path); why != "" {
		return why
	}
	r := t.resolved
	switch {
	case r == "/":
		return "rm of the root directory"
	case e.home != "" && r == e.home:
		return "rm of the home directory"
	case within(r, e.ws):
		return "rm of the workspace or one of its parents (" + r + ")"
	case filepath.Base(r) == ".git":
		return "rm of a .git directory"
	}
	return ""
}

// catastrophicPattern recognises deletions of everything by their spelling
// (`rm -rf /`, `~`, `..`, `*`), before any resolution.
func catastrophicPattern(p string) string {
	switch strings.TrimRight(p, "/") {
	case "", "/*", "~", "~/*", "..", ".", "*", ".*", "./*", "../*", "$?", "$HOME", "~/.*":
		return "rm of " + p + " would delete far more than intended"
	}
	return ""
}
