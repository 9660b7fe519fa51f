package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
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

func (p *prepared) Apply(ctx context.Context, sel engine.PatchSelection) ([]engine.FileChange, error) {
	plan, partial, err := p.selectPlan(ctx, sel)
	if err != nil {
		return nil, err
	}
	if _, err := p.r.Applier.Apply(ctx, plan); err != nil {
		return nil, err
	}
	if partial {
		// Not what the review showed: the diffs of what was written.
		return changes(Preview(plan), nil), nil
	}
	return changes(p.diffs, sel.Paths()), nil
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

// UndoLast undoes the newest change of a session applied in a's folder
// (exact bytes, modes and files it created removed) and forgets it, so the
// next undo reaches the change before. Changes the session applied in
// other folders are not in the way; when it has none here but some
// elsewhere, it refuses with a *FolderMismatchError naming them.
func UndoLast(ctx context.Context, a *Applier, st *store.Store, sessionID string) (string, error) {
	root, err := a.root()
	if err != nil {
		return "", err
	}
	root = filepath.Clean(root)
	// A change recorded before folders were (and whose session was gone
	// by then) names none: it is taken as in this folder, the only one
	// there is to go by, and Undo still refuses any file that no longer
	// holds what the change wrote.
	change, err := st.LastChangeOfSessionIn(ctx, sessionID, root)
	if err != nil {
		return "", err
	}
	if change.ID == "" {
		folders, err := st.ChangeFolders(ctx, sessionID)
		if err != nil {
			return "", err
		}
		if len(folders) == 0 {
			return "", fmt.Errorf("session %s has %w", sessionID, ErrNothingToUndo)
		}
		return "", &FolderMismatchError{SessionID: sessionID, Folders: folders, Here: root}
	}
	if err := a.Undo(ctx, StoreSnapshots{Store: st, SessionID: sessionID}, change.ID); err != nil {
		return "", err
	}
	if err := st.DeleteChange(ctx, change.ID); err != nil {
		return "", err
	}
	return "undid " + change.ID, nil
}

// StoreSnapshots keeps a session's patch snapshots in kz's store, so undo
// works across restarts.
type StoreSnapshots struct {
	Store     *store.Store
	SessionID string
	// Workspace is the absolute folder the applier writes in. It is
	// recorded with each snapshot, so that undo acts only where the change
	// was applied, and it lets SaveSnapshot tell which directories a new
	// file's change is about to create. Empty records no folder.
	Workspace string
}

// SaveSnapshot implements SnapshotSaver.
func (s StoreSnapshots) SaveSnapshot(ctx context.Context, sn Snapshot) error {
	dirs := sn.CreatedDirs
	if dirs == nil && !sn.Existed && s.Workspace != "" {
		dirs = missingParents(s.Workspace, sn.Path)
	}
	return s.Store.SaveSnapshot(ctx, store.Snapshot{SessionID: s.SessionID, ChangeID: sn.ChangeID, Path: sn.Path,
		Existed: sn.Existed, Content: sn.Content, Mode: sn.Mode, AfterExists: sn.AfterExists, AfterSHA256: sn.AfterSHA256,
		Workspace: s.Workspace, CreatedDirs: dirs})
}

// missingParents returns the ancestors of rel (slash-separated, relative
// to root), parents first, that do not exist yet. Apply saves a file's
// snapshot before it writes anything, so these are exactly the directories
// its write will create. Anything that exists (a directory, a symlink, a
// file) stops the list: the change did not make it.
func missingParents(root, rel string) []string {
	var out []string
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		dir := rel[:i]
		if len(out) == 0 {
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir))); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		out = append(out, dir)
	}
	return out
}

// LoadSnapshots implements SnapshotLoader.
func (s StoreSnapshots) LoadSnapshots(ctx context.Context, changeID string) ([]Snapshot, error) {
	rows, err := s.Store.Snapshots(ctx, changeID)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(rows))
	for _, r := range rows {
		out = append(out, Snapshot{ChangeID: r.ChangeID, Path: r.Path, Existed: r.Existed, Content: r.Content, Mode: r.Mode,
			AfterExists: r.AfterExists, AfterSHA256: r.AfterSHA256, CreatedDirs: r.CreatedDirs})
	}
	return out, nil
}

// ShellRunner returns a Reviewer.Run that runs a verification command with
// bash in dir, under sb with the answer's confinement (the same sandbox
// and profiles as kz's bash tool), in its own process group (all of which
// dies with ctx), with the given environment, keeping at most maxOutput
// bytes of output. A nil sb runs the command unconfined, as on a machine
// without a sandbox. When the sandbox cannot start the command, it is
// not run and the error says why.
func ShellRunner(sb *sandbox.Sandbox, dir string, env []string, timeout time.Duration, maxOutput int) func(context.Context, engine.Confinement, string) (string, int, error) {
	return func(ctx context.Context, c engine.Confinement, command string) (string, int, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		argv := []string{"/bin/bash", "-c", command}
		var cmd *exec.Cmd
		if sb != nil {
			var err error
			if cmd, err = sb.Command(ctx, c, sandbox.Spec{Argv: argv, Dir: dir, Env: env}); err != nil {
				return "", -1, fmt.Errorf("run %q: %w", command, err)
			}
		} else {
			cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = dir, env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 2 * time.Second
		}
		var out cappedBuffer
		out.max = maxOutput
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if sb != nil {
			if serr := sb.SetupError(cmd); serr != nil && ctx.Err() == nil {
				return out.String(), -1, fmt.Errorf("run %q: %w", command, serr)
			}
		}
		var exit *exec.ExitError
		switch {
		case err == nil:
			return out.String(), 0, nil
		case errors.As(err, &exit) && ctx.Err() == nil:
			return out.String(), exit.ExitCode(), nil
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
