package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/config"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
	"github.com/kaizen-code/kz/tui"
)

// kz's subcommands other than a session: sessions, runtimes, trust and
// undo, and the undo and grant services the TUI is given.

// applier is the patch applier of a session in ws; its journal lives in
// kz's data directory, outside the workspace.
func (e *env) applier(ws *workspace.Workspace, st *store.Store, sessionID string) *patch.Applier {
	return &patch.Applier{FS: ws, Snapshots: patch.StoreSnapshots{Store: st, SessionID: sessionID},
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
	return patch.UndoLast(ctx, u.e.applier(u.ws, u.st, u.sessionID), u.st, u.sessionID)
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

// cmdUndo restores every file of the last applied change of a session (the
// latest of this folder by default) to its exact previous bytes.
func cmdUndo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 1 {
		return usagef("usage: kz undo [SESSION-ID]")
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
	if fs.NArg() == 1 {
		si, err = st.Session(ctx, fs.Arg(0))
	} else {
		si, err = st.LatestSession(ctx, e.workspace)
	}
	if err != nil {
		return err
	}
	ws, err := workspace.Open(si.Workspace)
	if err != nil {
		return err
	}
	defer func() { _ = ws.Close() }()
	msg, err := patch.UndoLast(ctx, e.applier(ws, st, si.ID), st, si.ID)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "%s in %s\n", msg, si.Workspace)
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

func cmdRuntimes(args []string, stdout io.Writer) error {
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
	entries, err := e.runtimeEntries("", "", nil, true, nil)
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
	}
	var rows []row
	for _, x := range entries {
		m := ""
		if len(x.Models) > 0 {
			m = x.Models[0]
		}
		rows = append(rows, row{Name: x.Runtime.Name(), Version: x.Version, Available: x.Unavailable == "", Why: x.Unavailable, Models: x.Models, Capabilities: x.Runtime.Capabilities(m)})
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
	if sb := tools.ProbeSandbox(); sb.Available {
		_, _ = fmt.Fprintf(stdout, "\nsandbox: Landlock ABI %d can confine kz's own bash tool to the workspace and temp dirs\n", sb.ABI)
	} else {
		_, _ = fmt.Fprintf(stdout, "\nsandbox: not available (%s); kz's bash tool runs unconfined, behind the gate\n", sb.Reason)
	}
	return nil
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
		return usagef("sessions %s: %v", sub, err)
	}
	// Flags may also follow the id: kz sessions export ID --format json.
	rest := fs.Args()
	if len(rest) > 1 {
		if err := fs.Parse(rest[1:]); err != nil {
			return usagef("sessions %s: %v", sub, err)
		}
		rest = append(rest[:1], fs.Args()...)
	}
	needID := func() (string, error) {
		if len(rest) != 1 {
			return "", usagef("usage: kz sessions %s ID", sub)
		}
		return rest[0], nil
	}
	e, err := loadEnv(*dataDir)
	if err != nil {
		return err
	}
	st, err := e.openStore(ctx, os.Stderr)
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
		return store.WriteSessionList(stdout, list)
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
		return x.WriteSummary(stdout)
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
