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
	UsageLine: "kz undo [SESSION-ID]",
	Short:     []Usage{{"kz undo [ID]", "restore the files of the last applied change"}},
	Long: `kz undo restores every file of the newest patch proposal a session applied
in this folder to its exact previous bytes and mode, and removes the files
the change created, and its directories once they are empty again.
Without an id it takes the session of the newest change applied here. A
file edited since the change is not overwritten: the undo is refused,
naming it. Undo acts only in this folder; for a session whose changes are
elsewhere it says where to run it. --data-dir DIR names kz's data
directory, as for kz itself.
`,
	Run: runUndo,
}

func runUndo(ctx context.Context, inv *Invocation, args []string) error {
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
			return usagef("%v (usage: %s)", cliflag.Message(err), inv.Command.UsageLine)
		}
		return usagef("usage: %s", inv.Command.UsageLine)
	}
	if len(rest) == 1 && strings.TrimSpace(rest[0]) == "" {
		return usagef("kz undo: the session id is empty (kz sessions list shows them)")
	}
	if err := requireValues(fs, "data-dir"); err != nil {
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
	var si store.SessionInfo
	if len(rest) == 1 {
		if si, err = st.Session(ctx, rest[0]); err != nil {
			return err
		}
	} else {
		last, err := st.LastChangeIn(ctx, e.Workspace)
		if err != nil {
			return err
		}
		if last.ID != "" {
			si, err = st.Session(ctx, last.SessionID)
		} else if si, err = st.LatestSession(ctx, e.Workspace); err != nil {
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
	ws, err := workspace.Open(e.Workspace)
	if err != nil {
		return err
	}
	defer func() { _ = ws.Close() }()
	msg, err := e.Undo(ctx, st, ws, si.ID)
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
