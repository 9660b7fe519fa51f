package tools

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"sync"
	"time"

	"github.com/kaizen-code/kz/tools/sandbox"
	"github.com/kaizen-code/kz/tools/workspace"
)

// Snapshot is the content of a file before a tool changed it, so the change
// can be undone. Existed is false for a file the tool created.
type Snapshot struct {
	SessionID  string
	ToolCallID string
	// Path is workspace-relative and symlink-resolved.
	Path    string
	Existed bool
	Content []byte
	Mode    fs.FileMode
}

// SnapshotSaver stores snapshots; the store implements it (table
// snapshots). A write does not happen when saving its snapshot fails.
type SnapshotSaver interface {
	SaveSnapshot(ctx context.Context, s Snapshot) error
}

// ArtifactSaver stores a result too large for the model and returns a
// reference the model and the person can use to find it.
type ArtifactSaver interface {
	SaveArtifact(ctx context.Context, sessionID, toolCallID string, content []byte) (ref string, err error)
}

// Env is the per-session state the tools share: the workspace, where
// snapshots go, the bash settings and what this session has read.
type Env struct {
	WS        *workspace.Workspace
	SessionID string
	// Snapshots receives the old content before every write. When nil,
	// writes are refused: kz never changes a file it could not undo.
	Snapshots SnapshotSaver
	// PassEnv names environment variables passed to bash besides the
	// minimal set (childenv.Spec.Pass); it is the only way a name
	// containing KEY, SECRET, TOKEN or PASSWORD reaches a command.
	PassEnv []string
	// BashTimeout is the default timeout of a command (DefaultBashTimeout
	// when zero); a call may ask for less or up to MaxBashTimeout.
	BashTimeout time.Duration
	// KillGrace is how long a cancelled command gets between SIGTERM and
	// SIGKILL (DefaultKillGrace when zero).
	KillGrace time.Duration
	// Sandbox runs every shell command of the session under the profile
	// of the gate's answer (tools/sandbox). Nil means no sandbox at all,
	// as on a machine without one: commands run unconfined, after the
	// gate's yes.
	Sandbox *sandbox.Sandbox
	// PostHooks runs the PostToolUse hooks after each successful call;
	// nil runs none.
	PostHooks PostToolHooks
	// Artifacts reads back this session's stored results (read_artifact);
	// nil when the session keeps none.
	Artifacts ArtifactReader
	// FetchPolicy says which hosts web_fetch may reach at a loopback,
	// private or link-local address (those an allow rule names); nil
	// means none.
	FetchPolicy FetchPolicy

	reads readState
	// readPolicy judges each entry grep, glob and list_dir meet (see
	// ReadPolicy); nil withholds only credential files from grep.
	readPolicy ReadPolicy
	// policyOnly marks the Env of `kz policy check`: calls are prepared
	// to be judged, never run, and there is no session history, so
	// edit_file's has-been-read check does not apply.
	policyOnly bool
}

// NewEnv returns an Env for one session in ws.
func NewEnv(ws *workspace.Workspace, sessionID string, snapshots SnapshotSaver) *Env {
	return &Env{WS: ws, SessionID: sessionID, Snapshots: snapshots}
}

// readRecord is what the session saw of a file when it last read or wrote
// it.
type readRecord struct {
	hash    [32]byte
	modTime time.Time
	size    int64
}

// readState maps resolved workspace-relative paths to what the session
// last saw, so edit_file can refuse a file it has not read or that changed
// on disk since.
type readState struct {
	mu sync.Mutex
	m  map[string]readRecord
}

func (r *readState) record(path string, content []byte, fi fs.FileInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]readRecord{}
	}
	rec := readRecord{hash: sha256.Sum256(content), size: int64(len(content))}
	if fi != nil {
		rec.modTime = fi.ModTime()
	}
	r.m[path] = rec
}

func (r *readState) get(path string) (readRecord, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.m[path]
	return rec, ok
}
