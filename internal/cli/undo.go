package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/patch"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/tools/workspace"
)

// cmdUndo restores every file of the newest change of a session applied
// in this folder to its exact previous bytes. Without an id it takes the
// session of the newest change applied in this folder (or, to say there
// is nothing to undo, the latest session of this folder). It acts only in
// this folder: a session with no change here is refused with the folders
// its changes are in (see patch.FolderMismatchError for why).
var cmdUndo = &Command{
	Name:      "undo",
	UsageLine: "kz undo [--list] [--session ID | ID]",
	Short:     []Usage{{"kz undo [ID]", "restore the files of the last change"}, {"kz undo --list", "show what kz undo would restore"}},
	Long: `kz undo takes back the newest change a session made in this folder,
whatever made it: a patch proposal applied as a whole, a write of kz's
own tools, an edit of a CLI agent (Claude Code, Codex, an ACP agent), or
files a shell command changed. Every file goes back to its exact previous
bytes and mode, files the change created are removed and files it
deleted come back, all or none. Without an id (or --session ID) it takes
the session of the newest change here. A file edited since the change is
not overwritten: the undo is refused, naming it. A file over the snapshot
size cap is recorded as changed but cannot be restored; undo says so.
--list shows what kz undo would restore, and changes nothing. Undo acts
only in this folder; for a session whose changes are elsewhere it says
where to run it. --data-dir DIR names kz's data directory, as for kz
itself.
`,
	Run: runUndo,
}

func runUndo(ctx context.Context, inv *Invocation, args []string) error {
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "")
	list := fs.Bool("list", false, "")
	session := fs.String("session", "", "")
	err := fs.Parse(args)
	// Flags may also follow the id, as for kz sessions: kz undo ID --data-dir D.
	rest := fs.Args()
	if err == nil && len(rest) > 1 {
		err = fs.Parse(rest[1:])
		rest = append(rest[:1], fs.Args()...)
	}
	if err != nil || len(rest) > 1 || (len(rest) == 1 && *session != "") {
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			return usagef("%v (usage: %s)", cliflag.Message(err), inv.Command.UsageLine)
		}
		return usagef("usage: %s", inv.Command.UsageLine)
	}
	if len(rest) == 1 {
		*session = rest[0]
		if strings.TrimSpace(*session) == "" {
			return usagef("kz undo: the session id is empty (kz sessions list shows them)")
		}
	}
	if err := requireValues(fs, "data-dir", "session"); err != nil {
		return err
	}
	e, err := app.Load(*dataDir)
	if err != nil {
		return err
	}
	st, err := e.OpenStore(ctx, inv.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	si, err := undoSession(ctx, st, e.Workspace, *session)
	if err != nil {
		return err
	}
	ws, err := workspace.Open(e.Workspace)
	if err != nil {
		return err
	}
	defer func() { _ = ws.Close() }()
	if *list {
		return listUndo(ctx, inv, e, st, ws, si.ID)
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
	msg, err := e.UndoAny(ctx, st, ws, si.ID)
	var fm *patch.FolderMismatchError
	if errors.As(err, &fm) && *dataDir != "" {
		// The suggested command runs in another folder: it needs the same
		// database, named by its absolute path.
		fm.Flags = "--data-dir " + shellQuote(e.DataDir)
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(inv.Stdout, "%s in %s\n", msg, ws.Dir())
	return nil
}

// undoSession is the session kz undo acts on: the one named, else the one
// whose change in this folder is newest (a proposal or a checkpoint), else
// the latest session of this folder, to say there is nothing to undo.
func undoSession(ctx context.Context, st *store.Store, folder, id string) (store.SessionInfo, error) {
	if id != "" {
		return st.Session(ctx, id)
	}
	last, err := st.LastChangeIn(ctx, folder)
	if err != nil {
		return store.SessionInfo{}, err
	}
	pick := last.SessionID
	ckSession, ckTime, err := st.LastCheckpointIn(ctx, folder)
	if err != nil {
		return store.SessionInfo{}, err
	}
	if ckSession != "" {
		pick = ckSession
		if last.ID != "" {
			when, err := st.ChangeTime(ctx, last.ID)
			if err != nil {
				return store.SessionInfo{}, err
			}
			if when.After(ckTime) {
				pick = last.SessionID
			}
		}
	}
	if pick != "" {
		return st.Session(ctx, pick)
	}
	si, err := st.LatestSession(ctx, folder)
	if err != nil {
		return si, fmt.Errorf("%w to undo (give a session id: kz sessions list shows them)", err)
	}
	return si, nil
}

// listUndo prints what kz undo would restore, changing nothing.
func listUndo(ctx context.Context, inv *Invocation, e *app.Env, st *store.Store, ws *workspace.Workspace, sessionID string) error {
	lc, ok, err := e.FindLastChange(ctx, st, ws, sessionID)
	if err != nil {
		return err
	}
	if !ok {
		_, _ = fmt.Fprintf(inv.Stdout, "no change of session %s to undo in %s\n", sessionID, ws.Dir())
		return nil
	}
	what := string(lc.Kind) + " " + lc.ID
	if lc.Tool != "" {
		what = fmt.Sprintf("%s call of turn %d on %s (%s)", lc.Tool, lc.TurnID, lc.Runtime, lc.ID)
	} else if lc.Kind == app.KindTurn {
		what = fmt.Sprintf("turn %d on %s (%s)", lc.TurnID, lc.Runtime, lc.ID)
	}
	_, _ = fmt.Fprintf(inv.Stdout, "kz undo would take back the %s of session %s, made %s:\n", what, sessionID, lc.When.Format("2006-01-02 15:04:05"))
	for _, f := range lc.Files {
		_, _ = fmt.Fprintf(inv.Stdout, "  %s\n", f)
	}
	for _, u := range lc.Unrestorable {
		_, _ = fmt.Fprintf(inv.Stdout, "  %s (cannot be restored: %s)\n", u.Path, u.Reason)
	}
	return nil
}
