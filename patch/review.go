package patch

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/proc"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// Reviewer is the engine's Patcher over an Applier: it turns a model's
// answer into a validated plan with diffs for review, applies the accepted
// files, and runs verification commands through Run.
type Reviewer struct {
	Applier *Applier
	// Run executes one verification command in the workspace (the session
	// has already passed it through the gate) under the confinement of the
	// gate's answer, and returns its combined output and exit code.
	Run func(ctx context.Context, c engine.Confinement, command string) (string, int, error)
}

var _ engine.Patcher = (*Reviewer)(nil)

// Prepare implements engine.Patcher.
func (r *Reviewer) Prepare(ctx context.Context, text string) (engine.PreparedPatch, error) {
	p, err := Parse(text)
	if errors.Is(err, ErrNoProposal) {
		return nil, engine.ErrNoProposal
	}
	if err != nil {
		return nil, err
	}
	plan, err := r.Applier.Validate(ctx, p)
	if err != nil {
		return nil, err
	}
	return &prepared{r: r, plan: plan, diffs: Preview(plan)}, nil
}

// Feedback implements engine.Patcher.
func (r *Reviewer) Feedback(err error) string { return FormatFeedback(err) }

type prepared struct {
	r     *Reviewer
	plan  *Plan
	diffs []FileDiff
}

func (p *prepared) ID() string      { return p.plan.ChangeID }
func (p *prepared) Summary() string { return p.plan.Proposal.Summary }

func (p *prepared) Verification() []string { return p.plan.Proposal.Verification }

func (p *prepared) Paths() []string {
	out := make([]string, 0, len(p.plan.Files))
	for _, f := range p.plan.Files {
		out = append(out, f.Path)
		if f.NewPath != "" {
			out = append(out, f.NewPath)
		}
	}
	return out
}

func (p *prepared) Files() []engine.FileChange { return changes(p.diffs, nil) }

func (p *prepared) Apply(ctx context.Context, paths []string) ([]engine.FileChange, error) {
	plan := p.plan
	if len(paths) > 0 {
		var err error
		if plan, err = plan.Select(paths...); err != nil {
			return nil, err
		}
	}
	if _, err := p.r.Applier.Apply(ctx, plan); err != nil {
		return nil, err
	}
	return changes(p.diffs, paths), nil
}

func (p *prepared) Verify(ctx context.Context, c engine.Confinement, command string) (string, int, error) {
	if p.r.Run == nil {
		return "", -1, errors.New("no command runner is configured for verification")
	}
	return p.r.Run(ctx, c, command)
}

// changes converts previews, keeping only the listed paths when given.
func changes(diffs []FileDiff, only []string) []engine.FileChange {
	out := make([]engine.FileChange, 0, len(diffs))
	for _, d := range diffs {
		if len(only) > 0 && !slices.Contains(only, d.Path) && (d.NewPath == "" || !slices.Contains(only, d.NewPath)) {
			continue
		}
		path := d.Path
		if d.NewPath != "" {
			path = d.NewPath
		}
		out = append(out, engine.FileChange{Path: path, Operation: string(d.Operation), Diff: d.Diff, Added: d.Added, Removed: d.Removed})
	}
	return out
}

// FolderMismatchError refuses to undo for a session that has no change
// applied in the applier's folder. A session can be resumed in another
// folder than the one it started in, so its changes can be spread over
// several folders; undo takes the newest change of the session applied in
// its own folder (changes in different folders touch different files, so
// a later change elsewhere does not stand in the way), and refuses only
// when there is none here.
//
// Undo could act on the recorded folder instead, but it refuses: kz writes
// only inside the folder it runs in (the gate's workspace confinement, the
// path guard and the journal are all set up for that folder), and a
// command that rewrote files in a folder the person is not looking at,
// under that folder's rules unchecked, would be a surprise. Refusing costs
// one cd and names the folder.
type FolderMismatchError struct {
	SessionID string
	// Folders are where the session's changes were applied, the folder of
	// its newest change first; Here is the applier's folder.
	Folders []string
	Here    string
	// Flags are the arguments the suggested kz undo needs besides the
	// session id (--data-dir DIR when it was given), already quoted for
	// a shell; the caller that knows them sets them.
	Flags string
}

func (e *FolderMismatchError) Error() string {
	where, what := "its last change was applied in "+e.Folders[0], "undo it from that folder"
	if len(e.Folders) > 1 {
		where, what = "its changes were applied in "+strings.Join(e.Folders, ", "), "undo them from those folders, the newest first"
	}
	cmd := "kz undo " + e.SessionID
	if e.Flags != "" {
		cmd += " " + e.Flags
	}
	return fmt.Sprintf("session %s has no change applied in %s: %s; %s: cd %s && %s",
		e.SessionID, e.Here, where, what, shellQuote(e.Folders[0]), cmd)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ErrNothingToUndo means the session has no applied change left.
var ErrNothingToUndo = errors.New("no change to undo")

// ChangeLog is the record of a session's applied changes that UndoLast
// works from, with the snapshots of each; internal/app keeps it in kz's
// store.
type ChangeLog interface {
	SnapshotLoader
	// LastChangeIn returns the id of the session's newest change applied
	// in the folder root, or "" when there is none. A change recorded
	// without a folder counts as in every folder.
	LastChangeIn(ctx context.Context, root string) (string, error)
	// ChangeFolders lists the folders the session's changes were applied
	// in, the folder of its newest change first.
	ChangeFolders(ctx context.Context) ([]string, error)
	// ForgetChange drops an undone change from the log, so that the next
	// undo reaches the change before it.
	ForgetChange(ctx context.Context, changeID string) error
}

// UndoLast undoes the newest change of a session applied in a's folder
// (exact bytes, modes and files it created removed) and forgets it, so the
// next undo reaches the change before. Changes the session applied in
// other folders are not in the way; when it has none here but some
// elsewhere, it refuses with a *FolderMismatchError naming them.
func UndoLast(ctx context.Context, a *Applier, log ChangeLog, sessionID string) (string, error) {
	root, err := a.root()
	if err != nil {
		return "", err
	}
	root = filepath.Clean(root)
	// A change recorded before folders were (and whose session was gone
	// by then) names none: it is taken as in this folder, the only one
	// there is to go by, and Undo still refuses any file that no longer
	// holds what the change wrote.
	change, err := log.LastChangeIn(ctx, root)
	if err != nil {
		return "", err
	}
	if change == "" {
		folders, err := log.ChangeFolders(ctx)
		if err != nil {
			return "", err
		}
		if len(folders) == 0 {
			return "", fmt.Errorf("session %s has %w", sessionID, ErrNothingToUndo)
		}
		return "", &FolderMismatchError{SessionID: sessionID, Folders: folders, Here: root}
	}
	if err := a.Undo(ctx, log, change); err != nil {
		return "", err
	}
	if err := log.ForgetChange(ctx, change); err != nil {
		return "", err
	}
	return "undid " + change, nil
}

// ShellRunner returns a Reviewer.Run that runs a verification command with
// bash in dir, under sb with the answer's confinement (the same sandbox,
// profiles and sandbox servers as kz's bash tool, through sb.Cmd), with the
// given environment, keeping at most maxOutput bytes of output. When ctx
// ends (or timeout passes) every process the command started is killed:
// on a sandbox server the server kills them all, under a per-command
// bwrap or unconfined its process group is. A nil sb runs the command
// unconfined in its own process group, as on a machine without a sandbox.
// When the sandbox cannot start the command, it is not run and the error
// says why.
func ShellRunner(sb *sandbox.Sandbox, dir string, env []string, timeout time.Duration, maxOutput int) func(context.Context, engine.Confinement, string) (string, int, error) {
	return func(ctx context.Context, c engine.Confinement, command string) (string, int, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		argv := []string{"/bin/bash", "-c", command}
		var cmd *sandbox.Cmd
		if sb != nil {
			var err error
			if cmd, err = sb.Cmd(ctx, c, sandbox.Spec{Argv: argv, Dir: dir, Env: env}); err != nil {
				return "", -1, fmt.Errorf("run %q: %w", command, err)
			}
		} else {
			ex := exec.CommandContext(ctx, argv[0], argv[1:]...)
			ex.Dir, ex.Env = dir, env
			proc.OwnGroup(ex)
			cmd = sandbox.Wrap(ex)
		}
		var out cappedBuffer
		out.max = maxOutput
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if serr := cmd.SetupError(); serr != nil && ctx.Err() == nil {
			return out.String(), -1, fmt.Errorf("run %q: %w", command, serr)
		}
		var exit *sandbox.ExitError
		switch {
		case err == nil:
			return out.String(), 0, nil
		case errors.As(err, &exit) && ctx.Err() == nil:
			return out.String(), exit.ExitCode(), nil
		case ctx.Err() != nil:
			// Killed for the timeout or an interrupt: say which.
			return out.String(), -1, fmt.Errorf("run %q: %w (%w)", command, ctx.Err(), err)
		default:
			return out.String(), -1, fmt.Errorf("run %q: %w", command, err)
		}
	}
}

// cappedBuffer keeps the first max bytes written and counts the rest.
type cappedBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - len(b.buf)
	if room >= len(p) || b.max <= 0 {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return string(b.buf) + fmt.Sprintf("\n… %d more bytes not shown", b.dropped)
	}
	return string(b.buf)
}
