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
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/patch"
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
	lines := strings.SplitAfter(string(old), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var b strings.Builder
	pos := 0
	for hi, h := range f.hunks {
		start, _ := hunkSide(h, true)
		if start < pos || start > len(lines) {
			return nil, fmt.Errorf("hunk %d is outside the file", hi+1)
		}
		for _, l := range lines[pos:start] {
			b.WriteString(l)
		}
		k := start
		for _, l := range h.lines {
			text := l.text
			if l.crlf {
				text += "\r"
			}
			if !l.noEOL {
				text += "\n"
			}
			if l.kind != lineAdded {
				if k >= len(lines) || lines[k] != text {
					return nil, fmt.Errorf("hunk %d does not match line %d: the file changed since the proposal", hi+1, k+1)
				}
				k++
			}
			if l.kind != lineRemoved {
				b.WriteString(text)
			}
		}
		pos = k
	}
	for _, l := range lines[pos:] {
		b.WriteString(l)
	}
	return []byte(b.String()), nil
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
	oldName, newName := "a/"+f.path, "b/"+f.path
	if f.oldPath != "" {
		oldName = "a/" + f.oldPath
	}
	if f.op == "add" {
		oldName = "/dev/null"
	}
	diff, added, removed := patch.UnifiedDiff(oldName, newName, msg.old, edited)
	nf := filesFromChanges([]engine.FileChange{{Path: f.path, Operation: f.op, Diff: diff, Added: added, Removed: removed}})[0]
	nf.oldPath = f.oldPath
	if f.op == "rename" {
		nf.op = "rename"
	}
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
	r.flash = fmt.Sprintf("%s edited: +%d −%d against the file on disk; y applies it as shown", f.path, added, removed)
}
