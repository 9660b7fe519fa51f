package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/themes"
)

// editorDoneMsg reports that $EDITOR returned on a file of the review.
type editorDoneMsg struct {
	requestID string
	file      int
	tmp       string
	old       []byte
	err       error
}

// execProcess runs the editor with the terminal handed over; tests run it
// directly.
var execProcess = tea.ExecProcess

// discard removes the temporary file of an edit nobody waits for.
func (m editorDoneMsg) discard() { _ = os.Remove(m.tmp) }

// editorCommand is $VISUAL, else $EDITOR, else vi, split into words (an
// editor is often configured with flags, "code --wait").
func editorCommand() []string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if f := strings.Fields(os.Getenv(v)); len(f) > 0 {
			return f
		}
	}
	return []string{"vi"}
}

// proposedContent rebuilds a file's new content from its old content and
// the hunks of its diff, exactly (line endings and a missing final
// newline included). A hunk that does not match the old content is an
// error: the file changed since the proposal.
func proposedContent(old []byte, f diffFile) ([]byte, error) {
	b, err := diff.Apply(old, f.hunks, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the file changed since the proposal", err)
	}
	return b, nil
}

// openEditor starts $EDITOR on the proposed content of the file under the
// cursor, in a temporary file; the review re-diffs when it returns.
func (r *review) openEditor(workspace string) tea.Cmd {
	fi := r.fileCursor
	if !r.patch || fi >= len(r.files) {
		return nil
	}
	f := r.files[fi]
	switch {
	case f.binary:
		r.flash = "a binary file cannot be edited here"
		return nil
	case f.op == "delete":
		r.flash = "the proposal deletes this file: nothing to edit"
		return nil
	case workspace == "":
		r.flash = "no workspace to read the file from"
		return nil
	}
	var old []byte
	if f.op != "add" {
		root, err := os.OpenRoot(workspace)
		if err != nil {
			r.flash = "open the workspace: " + err.Error()
			return nil
		}
		src := f.path
		if f.oldPath != "" {
			src = f.oldPath
		}
		old, err = root.ReadFile(filepath.FromSlash(src))
		_ = root.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.flash = "read " + src + ": " + err.Error()
			return nil
		}
	}
	cur := r.contents[f.path]
	if cur == nil {
		var err error
		if cur, err = proposedContent(old, r.original[fi]); err != nil {
			r.flash = "cannot edit " + f.path + ": " + err.Error()
			return nil
		}
	}
	tmp, err := os.CreateTemp("", "kz-review-*"+filepath.Ext(f.path))
	if err == nil {
		_, err = tmp.Write(cur)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		r.flash = "temporary file: " + err.Error()
		return nil
	}
	argv := append(editorCommand(), tmp.Name())
	cmd := exec.Command(argv[0], argv[1:]...)
	id := r.ev.RequestID
	return execProcess(cmd, func(err error) tea.Msg {
		return editorDoneMsg{requestID: id, file: fi, tmp: tmp.Name(), old: old, err: err}
	})
}

// onEdited re-diffs a file after the editor returned: the review then
// shows, and an allow applies, the content as the person left it.
func (r *review) onEdited(msg editorDoneMsg, t *themes.Theme) {
	defer func() { _ = os.Remove(msg.tmp) }()
	if msg.requestID != r.ev.RequestID || msg.file >= len(r.files) {
		return
	}
	if msg.err != nil {
		r.flash = "the editor failed: " + msg.err.Error()
		return
	}
	edited, err := os.ReadFile(msg.tmp)
	if err != nil {
		r.flash = "read the edited file: " + err.Error()
		return
	}
	f := r.files[msg.file]
	// The review shows the edited file as a diff against the file on
	// disk, computed here: its hunks are what the review numbers.
	nf := diffFile{path: f.path, oldPath: f.oldPath, op: f.op, hunks: diff.Hunks(msg.old, edited)}
	nf.added, nf.removed = countHunks(nf.hunks)
	r.files[msg.file] = nf
	if r.contents == nil {
		r.contents = map[string][]byte{}
	}
	r.contents[f.path] = edited
	delete(r.rejectedHunks, msg.file)
	r.accepted[msg.file] = true
	r.dv = newDiffView(r.files, t)
	r.dv.hunkLabel = r.hunkLabel
	r.dv.ensure(80)
	r.dv.jumpFile(msg.file)
	r.flash = fmt.Sprintf("%s edited: +%d −%d against the file on disk; y applies it as shown", f.path, nf.added, nf.removed)
}
