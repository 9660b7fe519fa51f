package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/internal/termsafe"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools"
)

// cmdSessions lists, shows, exports and deletes stored sessions.
var cmdSessions = &Command{
	Name:      "sessions",
	UsageLine: "kz sessions list|show ID|export ID [--format md|json]|artifact ID N|delete ID",
	Short: []Usage{
		{"kz sessions list", "list stored sessions, newest first"},
		{"kz sessions show ID", "show a session's turns and their status"},
		{"kz sessions export ID [--format md|json]", ""},
		{"kz sessions artifact ID N", "print a tool result the session stored as artifact:N"},
		{"kz sessions delete ID", ""},
	},
	Long: `kz sessions list lists every stored session, newest first; --json prints
them as JSON. kz sessions show ID shows a session's turns and their status
(--json: the whole session as JSON). kz sessions export ID prints the
session as markdown, or with --format json as JSON. kz sessions artifact
ID N prints the tool result the session stored as artifact:N (a result too
large for the model, which saw a preview), with control characters
escaped. kz sessions delete ID deletes it. An ID may be any unique prefix; flags may follow it.
--data-dir DIR names kz's data directory, as for kz itself. When that
directory is read-only, list, show and export still read it, as it is.
`,
	Run: runSessions,
}

func runSessions(ctx context.Context, inv *Invocation, args []string) error {
	if len(args) == 0 {
		return usagef("usage: %s", inv.Command.UsageLine)
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
	e, err := app.Load(*dataDir)
	if err != nil {
		return err
	}
	open := e.OpenStore
	if sub == "list" || sub == "show" || sub == "export" || sub == "artifact" {
		open = e.OpenStoreForReading
	}
	st, err := open(ctx, inv.Stderr)
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
			return json.NewEncoder(inv.Stdout).Encode(list)
		}
		return store.WriteSessionList(inv.Stdout, safeSessions(list))
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
			return x.WriteJSON(inv.Stdout)
		}
		return safeExport(x).WriteSummary(inv.Stdout)
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
			return x.WriteMarkdown(inv.Stdout)
		case "json":
			return x.WriteJSON(inv.Stdout)
		}
		return usagef("--format must be md or json, not %q", *format)
	case "artifact":
		return printArtifact(ctx, inv.Stdout, st, rest)
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
		_, _ = fmt.Fprintf(inv.Stdout, "deleted %s\n", s.ID)
		return nil
	}
	return usagef("unknown sessions command %q (list, show, export, artifact, delete)", sub)
}

// printArtifact prints artifact N of a session, its control characters
// escaped as kz escapes every stored text it prints: a tool's output may
// hold escape sequences meant for nobody's terminal.
func printArtifact(ctx context.Context, w io.Writer, st *store.Store, args []string) error {
	if len(args) != 2 || strings.TrimSpace(args[0]) == "" {
		return usagef("usage: kz sessions artifact ID N (N as in artifact:N)")
	}
	ref, err := tools.ArtifactRef(json.RawMessage(strconv.Quote(args[1])))
	if err != nil {
		return usagef("kz sessions artifact: %v", err)
	}
	s, err := st.Session(ctx, args[0])
	if err != nil {
		return err
	}
	b, err := st.ReadArtifact(ctx, s.ID, ref)
	if err != nil {
		return err
	}
	text := termsafe.Text(string(b))
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = io.WriteString(w, text)
	return err
}

// safeSessions returns a copy of list fit for a terminal table: a title
// or a name is whatever someone typed, escape sequences and all.
func safeSessions(list []store.SessionInfo) []store.SessionInfo {
	out := make([]store.SessionInfo, len(list))
	for i, s := range list {
		s.ID, s.Title, s.Workspace = termsafe.Line(s.ID), termsafe.Line(s.Title), termsafe.Line(s.Workspace)
		s.Parent, s.ParentToolCallID = termsafe.Line(s.Parent), termsafe.Line(s.ParentToolCallID)
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
	y.Children = safeSessions(x.Children)
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
