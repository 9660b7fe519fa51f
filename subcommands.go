package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/internal/termsafe"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/permission"
	ossandbox "github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/workspace"
	"github.com/kaizen-code/kz/tui"
)

// kz's subcommands other than a session: sessions, runtimes, trust and
// undo, and the undo and grant services the TUI is given.

// applier is the patch applier of a session in ws; its journal lives in
// kz's data directory, outside the workspace.
func (e *env) applier(ws *workspace.Workspace, st *store.Store, sessionID string) *patch.Applier {
	return &patch.Applier{FS: ws, Snapshots: app.ChangeLog{Store: st, SessionID: sessionID, Workspace: ws.Dir()},
		JournalDir: filepath.Join(e.dataDir, "journal"), Root: ws.Dir()}
}

// undoer is /undo in the TUI: the same as kz undo, for this session.
type undoer struct {
	e         *env
	st        *store.Store
	ws        *workspace.Workspace
	sessionID string
}

func (u undoer) UndoLast(ctx context.Context) (string, error) {
	return patch.UndoLast(ctx, u.e.applier(u.ws, u.st, u.sessionID), app.ChangeLog{Store: u.st, SessionID: u.sessionID, Workspace: u.ws.Dir()}, u.sessionID)
}

// grantManager is /permissions in the TUI: the gate's session grants and
// the "always allow" rules of the grants file.
type grantManager struct {
	gate *permission.Gate
	file *config.GrantsFile
}

func (g grantManager) ListGrants(context.Context) ([]tui.Grant, error) {
	var out []tui.Grant
	for _, k := range g.gate.SessionGrants() {
		out = append(out, tui.Grant{Scope: "session", Rule: k})
	}
	rules, err := g.file.Rules()
	if err != nil {
		return out, err
	}
	for _, r := range rules {
		out = append(out, tui.Grant{Scope: "always", Rule: r})
	}
	return out, nil
}

func (g grantManager) RevokeGrant(ctx context.Context, gr tui.Grant) error {
	if gr.Scope == "session" {
		if !g.gate.RevokeSessionGrant(gr.Rule) {
			return fmt.Errorf("no session grant %q", gr.Rule)
		}
		return nil
	}
	ok, err := g.file.RemoveAllowRule(ctx, gr.Rule)
	if err != nil {
		return err
	}
	g.gate.RevokeAllowRule(gr.Rule)
	if !ok {
		return fmt.Errorf("no persisted grant %q", gr.Rule)
	}
	return nil
}

// RevertChange undoes an older change of this session from the change log
// (tui.ChangeReverter), as a new change /undo can take back.
func (u undoer) RevertChange(ctx context.Context, files []engine.FileChange) (string, error) {
	return patch.RevertChange(ctx, u.e.applier(u.ws, u.st, u.sessionID), files)
}

// cmdUndo restores every file of the newest change of a session applied
// in this folder to its exact previous bytes. Without an id it takes the
// session of the newest change applied in this folder (or, to say there
// is nothing to undo, the latest session of this folder). It acts only in
// this folder: a session with no change here is refused with the folders
// its changes are in (see patch.FolderMismatchError for why).
func cmdUndo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "")
	err := fs.Parse(args)
	// Flags may also follow the id, as for kz sessions: kz undo ID --data-dir D.
	rest := fs.Args()
	if err == nil && len(rest) > 1 {
		err = fs.Parse(rest[1:])
		rest = append(rest[:1], fs.Args()...)
	}
	if err != nil || len(rest) > 1 {
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			return usagef("%v (usage: kz undo [SESSION-ID])", cliflag.Message(err))
		}
		return usagef("usage: kz undo [SESSION-ID]")
	}
	if len(rest) == 1 && strings.TrimSpace(rest[0]) == "" {
		return usagef("kz undo: the session id is empty (kz sessions list shows them)")
	}
	if err := requireValues(fs, "data-dir"); err != nil {
		return err
	}
	e, err := loadEnv(*dataDir)
	if err != nil {
		return err
	}
	st, err := e.openStore(ctx, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	var si store.SessionInfo
	if len(rest) == 1 {
		if si, err = st.Session(ctx, rest[0]); err != nil {
			return err
		}
	} else {
		last, err := st.LastChangeIn(ctx, e.workspace)
		if err != nil {
			return err
		}
		if last.ID != "" {
			si, err = st.Session(ctx, last.SessionID)
		} else if si, err = st.LatestSession(ctx, e.workspace); err != nil {
			err = fmt.Errorf("%w to undo (give a session id: kz sessions list shows them)", err)
		}
		if err != nil {
			return err
		}
	}
	// A kz still running the session may be applying a change right now.
	claim, err := st.ClaimSession(ctx, si.ID)
	if err != nil {
		var iu *store.InUseError
		if errors.As(err, &iu) {
			iu.Hint = "use /undo in that kz, or wait for it to finish"
		}
		return err
	}
	defer func() { _ = claim.Release() }()
	ws, err := workspace.Open(e.workspace)
	if err != nil {
		return err
	}
	defer func() { _ = ws.Close() }()
	msg, err := patch.UndoLast(ctx, e.applier(ws, st, si.ID), app.ChangeLog{Store: st, SessionID: si.ID, Workspace: ws.Dir()}, si.ID)
	var fm *patch.FolderMismatchError
	if errors.As(err, &fm) && *dataDir != "" {
		// The suggested command runs in another folder: it needs the same
		// database, named by its absolute path.
		fm.Flags = "--data-dir " + shellQuote(e.dataDir)
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "%s in %s\n", msg, ws.Dir())
	return nil
}

func cmdTrust(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usagef("kz trust takes no arguments")
	}
	e, err := loadEnv("")
	if err != nil {
		return err
	}
	if _, err := os.Stat(e.paths.ProjectFile); err != nil {
		return fmt.Errorf("nothing to trust: %w", err)
	}
	if err := config.Trust(e.dataDir, e.paths.ProjectFile); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "trusted %s as it is now; changing it withdraws the trust\n", e.paths.ProjectFile)
	return nil
}

func cmdRuntimes(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("runtimes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usagef("usage: kz runtimes [--json]")
	}
	e, err := loadEnv("")
	if err != nil {
		return err
	}
	// What the configuration ignored (an untrusted folder's runtimes, say)
	// is said here as kz -p says it: a runtime missing from the table
	// without a word would look like a bug.
	for _, w := range e.cfg.Warnings {
		_, _ = fmt.Fprintf(stderr, "kz: warning: %s\n", w)
	}
	entries, err := e.runtimeEntries("", "", nil, nil, nil, true)
	if err != nil {
		return err
	}
	type row struct {
		Name         string              `json:"name"`
		Version      string              `json:"version,omitempty"`
		Available    bool                `json:"available"`
		Why          string              `json:"why,omitempty"`
		Models       []string            `json:"models,omitempty"`
		Capabilities engine.Capabilities `json:"capabilities"`
		// Sandbox is what confines the shell commands kz runs for the
		// runtime: the same for every runtime, repeated so that each row
		// stands alone.
		Sandbox ossandbox.Status `json:"sandbox"`
	}
	sb := ossandbox.Probe()
	var rows []row
	for _, x := range entries {
		m := ""
		if len(x.Models) > 0 {
			m = x.Models[0]
		}
		rows = append(rows, row{Name: x.Runtime.Name(), Version: x.Version, Available: x.Unavailable == "", Why: x.Unavailable, Models: x.Models, Capabilities: x.Runtime.Capabilities(m), Sandbox: sb})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "RUNTIME\tAVAILABLE\tMODELS\tCAPABILITIES")
	for _, r := range rows {
		avail := "yes"
		if r.Version != "" {
			avail = "yes (" + r.Version + ")"
		}
		if !r.Available {
			avail = "no: " + r.Why
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, avail, strings.Join(r.Models, ", "), r.Capabilities.Set)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "\nsandbox: %s\nagent CLIs: %s\n", sb.Reason, agentcli.DescribeStatus(sb))
	return nil
}

// safeSessions returns a copy of list fit for a terminal table: a title
// or a name is whatever someone typed, escape sequences and all.
func safeSessions(list []store.SessionInfo) []store.SessionInfo {
	out := make([]store.SessionInfo, len(list))
	for i, s := range list {
		s.ID, s.Title, s.Workspace = termsafe.Line(s.ID), termsafe.Line(s.Title), termsafe.Line(s.Workspace)
		s.Runtime, s.Model, s.Mode = termsafe.Line(s.Runtime), termsafe.Line(s.Model), engine.Mode(termsafe.Line(string(s.Mode)))
		out[i] = s
	}
	return out
}

// safeExport returns a copy of what kz sessions show prints, fit for a
// terminal (see safeSessions). The summary shows a prompt's first line
// only, so a prompt is cut at its first newline before the newlines of
// the rest are escaped.
func safeExport(x *store.Export) *store.Export {
	y := *x
	y.Session = safeSessions([]store.SessionInfo{x.Session})[0]
	y.Turns = make([]store.TurnInfo, len(x.Turns))
	for i, t := range x.Turns {
		first, _, more := strings.Cut(t.Prompt, "\n")
		if more {
			first += "…"
		}
		t.Prompt, t.Runtime, t.Model, t.Status = termsafe.Line(first), termsafe.Line(t.Runtime), termsafe.Line(t.Model), termsafe.Line(t.Status)
		y.Turns[i] = t
	}
	return &y
}

func cmdSessions(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("usage: kz sessions list|show ID|export ID [--format md|json]|delete ID")
	}
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "md", "")
	dataDir := fs.String("data-dir", "", "")
	asJSON := fs.Bool("json", false, "")
	sub := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return usagef("sessions %s: %s", sub, cliflag.Message(err))
	}
	// Flags may also follow the id: kz sessions export ID --format json.
	rest := fs.Args()
	if len(rest) > 1 {
		if err := fs.Parse(rest[1:]); err != nil {
			return usagef("sessions %s: %s", sub, cliflag.Message(err))
		}
		rest = append(rest[:1], fs.Args()...)
	}
	needID := func() (string, error) {
		if len(rest) != 1 {
			return "", usagef("usage: kz sessions %s ID", sub)
		}
		if strings.TrimSpace(rest[0]) == "" {
			return "", usagef("kz sessions %s: the session id is empty (kz sessions list shows them)", sub)
		}
		return rest[0], nil
	}
	if err := requireValues(fs, "data-dir", "format"); err != nil {
		return err
	}
	e, err := loadEnv(*dataDir)
	if err != nil {
		return err
	}
	open := e.openStore
	if sub == "list" || sub == "show" || sub == "export" {
		open = e.openStoreForReading
	}
	st, err := open(ctx, os.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	switch sub {
	case "list":
		if len(rest) > 0 {
			return usagef("usage: kz sessions list [--json]")
		}
		list, err := st.ListSessions(ctx, "", 0)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(list)
		}
		return store.WriteSessionList(stdout, safeSessions(list))
	case "show":
		id, err := needID()
		if err != nil {
			return err
		}
		x, err := st.LoadExport(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return x.WriteJSON(stdout)
		}
		return safeExport(x).WriteSummary(stdout)
	case "export":
		id, err := needID()
		if err != nil {
			return err
		}
		x, err := st.LoadExport(ctx, id)
		if err != nil {
			return err
		}
		switch *format {
		case "md", "markdown":
			return x.WriteMarkdown(stdout)
		case "json":
			return x.WriteJSON(stdout)
		}
		return usagef("--format must be md or json, not %q", *format)
	case "delete":
		id, err := needID()
		if err != nil {
			return err
		}
		s, err := st.Session(ctx, id)
		if err != nil {
			return err
		}
		if err := st.DeleteSession(ctx, s.ID); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "deleted %s\n", s.ID)
		return nil
	}
	return usagef("unknown sessions command %q (list, show, export, delete)", sub)
}
