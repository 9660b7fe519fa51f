package checkpoint

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaizen-code/kz/tools/workspace"
)

// Own is the set of kz's own files and directories that lie inside a
// workspace (its store, logs, caches, the agents' homes), as
// workspace-relative slash paths. They are never checkpointed: kz writes
// them itself during every turn, so a checkpoint of them would record the
// store in the store (which then grows by a copy of itself a turn), and
// an undo or rewind would put an old database, write-ahead log or lock
// back under the live store, or refuse to undo anything else because kz
// has written them since. They lie inside a workspace when kz runs in the
// home directory or its data directory is put in the project. kz also
// puts the home's credential files here (the agents' logins, shell
// histories), whose secrets no checkpoint may keep in the store; the
// credentials known by their names are left out wherever they are
// (Tracker.skips).
type Own []string

// OwnPaths is Own for the absolute paths abs in ws. A path outside the
// workspace, or one that holds the whole workspace (a person working on
// kz's own directory), is left out: only what lies strictly inside is
// kz's to keep out of the workspace's history.
func OwnPaths(ws *workspace.Workspace, abs []string) Own {
	var own Own
	for _, p := range abs {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		cands := []string{filepath.Clean(p)}
		if real, err := filepath.EvalSymlinks(p); err == nil && real != cands[0] {
			cands = append(cands, real)
		}
		for _, c := range cands {
			if rel, err := ws.Rel(c); err == nil && rel != "." && !slices.Contains(own, rel) {
				own = append(own, rel)
			}
		}
	}
	slices.Sort(own)
	return own
}

// Covers reports whether the workspace-relative slash path rel is one of
// kz's own or lies below one.
func (o Own) Covers(rel string) bool {
	for _, p := range o {
		if rel == p || (strings.HasPrefix(rel, p) && rel[len(p)] == '/') {
			return true
		}
	}
	return false
}
