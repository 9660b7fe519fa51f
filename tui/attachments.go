package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// ImageReader reads an image file for the message being written, through
// the same gate as a mentioned file; internal/app's mention reader
// implements it. Its error matches engine.ErrNotImage for a file whose
// content is not an image (the file is then a text mention, or pasted
// text), and fs.ErrNotExist for a missing one.
type ImageReader interface {
	ReadImage(ctx context.Context, path string) (engine.Image, error)
}

// MessageSubmitter sends a message with images; *engine.Session
// implements it. A session without it takes text only.
type MessageSubmitter interface {
	SubmitMessage(msg engine.UserMessage) error
}

// attachedMsg delivers the image a pasted path named, or why it could not
// be attached; text is what was pasted, which goes into the input as
// typed text when the file is not an image.
type attachedMsg struct {
	text string
	img  engine.Image
	err  error
}

// imageReader is the mention reader's image side, if it has one.
func (m *Model) imageReader() ImageReader {
	r, _ := m.ext.mentions.(ImageReader)
	return r
}

// pastedPath returns the file a paste names, when the paste is one path
// to an existing regular file: as terminals paste a dragged file (quoted,
// with backslash-escaped spaces, or as a file:// URL), absolute or
// relative to the workspace. Anything else is text.
func pastedPath(text, workspace string) (string, bool) {
	p := strings.TrimSpace(text)
	if p == "" || strings.ContainsAny(p, "\n\r\x00") || len(p) > 4096 {
		return "", false
	}
	if len(p) >= 2 && (p[0] == '\'' || p[0] == '"') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	} else if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", false
		}
		p = u.Path
	} else {
		p = strings.NewReplacer(`\ `, " ", `\(`, "(", `\)`, ")", `\'`, "'").Replace(p)
	}
	if p == "" {
		return "", false
	}
	full := p
	if !filepath.IsAbs(full) {
		if workspace == "" {
			return "", false
		}
		full = filepath.Join(workspace, p)
	}
	// A Stat decides only whether to try: the read goes through the
	// reader (an os.Root and the gate), which checks again.
	fi, err := os.Stat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return p, true
}

// pasteImage starts attaching the file a paste names. It reports false
// when the paste is plain text, which the input then takes as it is.
func (m *Model) pasteImage(text string) (tea.Cmd, bool) {
	r := m.imageReader()
	if r == nil {
		return nil, false
	}
	p, ok := pastedPath(text, m.ext.workspace)
	if !ok {
		return nil, false
	}
	ctx := m.ctx
	return func() tea.Msg {
		img, err := r.ReadImage(ctx, p)
		return attachedMsg{text: text, img: img, err: err}
	}, true
}

// onAttached adds a pasted image to the message, or, for a file that is
// not an image, puts the pasted text in the input as the paste would
// have. A refused image (too large, denied by the gate) is named in a
// notice and its path is put in the input, so nothing is lost.
func (m *Model) onAttached(msg attachedMsg) {
	switch {
	case msg.err == nil:
		if len(m.attached) >= engine.MaxImages {
			m.tr.notice(fmt.Sprintf("a message may carry at most %d images", engine.MaxImages), "warn")
			return
		}
		m.attached = append(m.attached, msg.img)
		return
	case !errors.Is(msg.err, engine.ErrNotImage) && !errors.Is(msg.err, fs.ErrNotExist):
		m.tr.notice("could not attach the image: "+oneLine(msg.err.Error()), "warn")
	}
	m.input.InsertString(msg.text)
}

// detachLast removes the newest attachment; backspace on an empty input
// calls it.
func (m *Model) detachLast() bool {
	if len(m.attached) == 0 {
		return false
	}
	m.attached = m.attached[:len(m.attached)-1]
	return true
}

// attachmentsView is the chips above the input: one per attached image,
// and how to remove them.
func (m *Model) attachmentsView(t *themes.Theme) string {
	if len(m.attached) == 0 {
		return ""
	}
	chips := make([]string, len(m.attached))
	for i, im := range m.attached {
		chips[i] = t.Selected.Render(oneLine(im.Label()))
	}
	return ansi.Truncate(strings.Join(chips, " "), m.width, "…") + "\n" + t.Muted.Render("backspace on an empty input removes the last image")
}

// expandMessage builds the message a prompt sends: the images attached
// to the input, then the `@` mentions, each read through r. A mentioned
// image file becomes an attachment; any other file is inlined as text
// (expandMentions). It runs in a Cmd: reads block.
func expandMessage(ctx context.Context, r MentionReader, text string, attached []engine.Image) engine.UserMessage {
	msg := engine.UserMessage{Text: text, Images: attached}
	ir, ok := r.(ImageReader)
	if !ok {
		msg.Text = expandMentions(ctx, r, text)
		return msg
	}
	var textual []string
	var notes []string
	for _, p := range mentionedPaths(text) {
		img, err := ir.ReadImage(ctx, p)
		switch {
		case err == nil:
			msg.Images = append(msg.Images, img)
		case errors.Is(err, engine.ErrNotImage) || errors.Is(err, fs.ErrNotExist):
			textual = append(textual, p)
		default:
			notes = append(notes, fmt.Sprintf("(@%s not attached: %s)", p, oneLine(err.Error())))
		}
	}
	msg.Text = expandPaths(ctx, r, text, textual)
	if len(notes) > 0 {
		msg.Text += "\n\n" + strings.Join(notes, "\n")
	}
	return msg
}

// restoreAttached gives a refused message's attachments back to the
// input, unless others were attached since.
func (m *Model) restoreAttached(images []engine.Image) {
	if len(m.attached) == 0 {
		m.attached = images
	}
}

// imageLabels are the transcript's lines for a prompt's images.
func imageLabels(images []engine.Image) []string {
	out := make([]string, 0, len(images))
	for _, im := range images {
		out = append(out, im.Label())
	}
	return out
}
