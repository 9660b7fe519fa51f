package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/themes"
)

// review is the diff review shown, instead of the plain permission dialog,
// for every request that carries a diff: a patch proposal (apply_patch)
// or any runtime's write (kz's edit_file, Claude Code's Edit and Write,
// Codex's file changes, an ACP agent's edits and writes). It shows the
// files with their stats, the diff unified or side by side, and answers
// exactly the request it was opened for.
//
// Where the change can be taken in part (a proposal, or a write whose
// request says engine.SelectionContent) each file can be accepted or
// rejected, and within a file each hunk; the answer then allows the
// request with Answer.Patch, an engine.PatchSelection naming the accepted
// files, the kept hunks of each (indexes into diff.FileHunks of the
// file's diff, the list the applier reads, so that the hunk shown as the
// second is the second applied) and the content of files the person
// edited. Rejecting every file denies. A proposal's hunk marks are taken
// only when the caller says so (Options.HunkSelection). A mark the
// runtime cannot carry out is refused with a message rather than ignored.
type review struct {
	ev engine.Event
	// who names the subagent that asks, for a child session's request.
	who   string
	patch bool // a patch proposal: applied once, and editable
	// marks says files and hunks can be marked: the runtime (or kz's
	// patcher) takes part of the change.
	marks    bool
	summary  string
	files    []diffFile
	dv       *diffView
	accepted []bool
	// rejectedHunks[f][h] marks hunks the person does not want.
	rejectedHunks map[int]map[int]bool
	hunkSelect    bool
	fileCursor    int
	flash         string
	bodyH         int // the diff's height in the last frame, for paging
	// fitH is the room the diff had in the last frame (before its scroll
	// line took one): when it grows, the window grew (see lines).
	fitH    int
	denying bool
	input   textinput.Model
	keys    reviewKeys
	// workspace is where $EDITOR reads the file from; original keeps the
	// proposal's files as parsed, and contents the files the person
	// edited (path → the whole new content), sent with the answer.
	workspace string
	original  []diffFile
	contents  map[string][]byte
}

// reviewable says whether a permission request gets the review view: a
// proposal, and every write that carries a diff, whatever its runtime and
// tool name. Only writes carry a diff; a request recorded before requests
// said they write (Event.Write) is still a write when it has one.
func reviewable(ev engine.Event) bool {
	return isProposal(ev) || ev.Diff != ""
}

// isProposal says a request applies a patch proposal of kz's: an
// apply_patch that names the proposal or (recorded before requests did
// either) does not say it is a runtime's write, as Codex's file changes,
// also named apply_patch, do.
func isProposal(ev engine.Event) bool {
	return ev.Tool == engine.ToolApplyPatch && (ev.PatchID != "" || !ev.Write)
}

// newReview opens the review of a request. proposal, when not nil, is the
// patch_proposed event of the same patch: its per-file diffs and stats are
// better than the concatenated diff of the request.
func newReview(ev engine.Event, proposal *engine.Event, t *themes.Theme, hunkSelect bool) *review {
	r := &review{ev: ev, patch: isProposal(ev), hunkSelect: hunkSelect, keys: defaultReviewKeys()}
	r.marks = r.patch || ev.Selection == engine.SelectionContent
	if !r.patch {
		// A runtime's write says itself whether it takes hunks.
		r.hunkSelect = r.marks
	}
	if r.patch {
		// A proposal is applied once or not at all: it has no "always".
		r.ev.Grants = nil
	}
	if proposal != nil && len(proposal.Files) > 0 {
		r.files = filesFromChanges(proposal.Files)
		r.summary = proposal.Text
	} else {
		r.files = filesFromDiff(ev.Diff, ev.Paths)
	}
	r.original = append([]diffFile(nil), r.files...)
	r.accepted = make([]bool, len(r.files))
	for i := range r.accepted {
		r.accepted[i] = true
	}
	r.rejectedHunks = map[int]map[int]bool{}
	r.dv = newDiffView(r.files, t)
	r.dv.hunkLabel = r.hunkLabel
	in := textinput.New()
	in.Placeholder = "tell the model why, or what to do instead"
	in.Prompt = "✎ "
	in.CharLimit = 2000
	ist := in.Styles()
	ist.Cursor.Blink = false
	in.SetStyles(ist)
	r.input = in
	// Keys that could do nothing are neither offered nor taken.
	hunks := 0
	for _, f := range r.files {
		hunks += len(f.hunks)
	}
	r.keys.NextFile.SetEnabled(len(r.files) > 1)
	r.keys.PrevFile.SetEnabled(len(r.files) > 1)
	r.keys.NextHunk.SetEnabled(hunks > 1)
	r.keys.PrevHunk.SetEnabled(hunks > 1)
	if !r.marks {
		r.keys.ToggleFile.SetEnabled(false)
		r.keys.ToggleHunk.SetEnabled(false)
	}
	if !r.patch {
		r.keys.Edit.SetEnabled(false)
	} else {
		r.keys.AllowSession.SetEnabled(false)
		r.keys.AllowAlways.SetEnabled(false)
		r.keys.Allow.SetHelp("y", "apply accepted")
	}
	return r
}

func (r *review) hunkLabel(f, h int) string {
	switch {
	case !r.marks:
		return ""
	case !r.accepted[f]:
		return "✗"
	case r.rejectedHunks[f][h]:
		return "✗ hunk rejected"
	}
	return "✓"
}

// update handles a key. It returns the answer to send when the key gave
// one; the caller then drops the request from the dialog queue.
// Keys typed ahead never get here as answers: the root model holds them
// back until a pause (promptkeys.go).
func (r *review) update(msg tea.KeyPressMsg, width, bodyHeight int) (*answerAction, tea.Cmd) {
	id := r.ev.RequestID
	// Navigation needs the rows even before the first frame.
	r.dv.ensure(max(width-4, 10))
	if r.bodyH > 0 {
		bodyHeight = r.bodyH
	} else {
		// The scroll position is made for this height until a frame
		// measures the real one (see the resize in lines).
		r.bodyH, r.fitH = bodyHeight, bodyHeight
	}
	if r.denying {
		switch msg.String() {
		case "enter":
			return &answerAction{requestID: id, answer: engine.Answer{Decision: engine.DecisionDeny, Scope: engine.ScopeOnce,
				Feedback: strings.TrimSpace(r.input.Value())}}, nil
		case "esc":
			r.denying = false
			r.input.Blur()
			return nil, nil
		}
		var cmd tea.Cmd
		r.input, cmd = r.input.Update(msg)
		return nil, cmd
	}
	k := r.keys
	r.flash = ""
	if !r.marks && r.markKey(msg) {
		r.flash = r.wholeOnly()
		return nil, nil
	}
	switch {
	case key.Matches(msg, k.Allow):
		return r.allow(engine.ScopeOnce), nil
	case key.Matches(msg, k.AllowSession):
		return r.allow(engine.ScopeSession), nil
	case key.Matches(msg, k.AllowAlways):
		return r.allow(engine.ScopeAlways), nil
	case key.Matches(msg, k.Deny):
		return &answerAction{requestID: id, answer: engine.Answer{Decision: engine.DecisionDeny, Scope: engine.ScopeOnce}}, nil
	case key.Matches(msg, k.DenyMessage):
		r.denying = true
		return nil, r.input.Focus()
	case key.Matches(msg, k.ToggleFile):
		r.accepted[r.fileCursor] = !r.accepted[r.fileCursor]
	case key.Matches(msg, k.ToggleHunk):
		r.toggleHunk()
	case key.Matches(msg, k.Edit):
		return nil, r.openEditor(r.workspace)
	case key.Matches(msg, k.NextFile):
		r.moveFile(1)
	case key.Matches(msg, k.PrevFile):
		r.moveFile(-1)
	case key.Matches(msg, k.NextHunk):
		if r.dv.jumpHunk(1) < 0 {
			r.flash = "last hunk"
		}
		r.syncCursor()
	case key.Matches(msg, k.PrevHunk):
		if r.dv.jumpHunk(-1) < 0 {
			r.flash = "first hunk"
		}
		r.syncCursor()
	case key.Matches(msg, k.Layout):
		if r.dv.layout == layoutSplit {
			r.dv.layout = layoutUnified
		} else {
			r.dv.layout = layoutSplit
		}
	case key.Matches(msg, k.Up):
		r.dv.scroll(-1, bodyHeight)
		r.syncCursor()
	case key.Matches(msg, k.Down):
		r.dv.scroll(1, bodyHeight)
		r.syncCursor()
	case key.Matches(msg, k.PageUp):
		r.dv.scroll(-max(bodyHeight-1, 1), bodyHeight)
		r.syncCursor()
	case key.Matches(msg, k.PageDown):
		r.dv.scroll(max(bodyHeight-1, 1), bodyHeight)
		r.syncCursor()
	}
	return nil, nil
}

// markKey says msg is a file or hunk mark, whether the review offers
// marks or not.
func (r *review) markKey(msg tea.KeyPressMsg) bool {
	d := defaultReviewKeys()
	return key.Matches(msg, d.ToggleFile, d.ToggleHunk)
}

// wholeOnly is the refusal of a mark on a write its runtime applies whole.
func (r *review) wholeOnly() string {
	who := r.ev.Runtime
	if who == "" {
		who = "this runtime"
	}
	what := "the whole file"
	if len(r.files) > 1 {
		what = "the whole change"
	}
	return fmt.Sprintf("%s applies %s: accept or reject it whole (y/n)", who, what)
}

func (r *review) toggleHunk() {
	f, h := r.dv.hunkAt()
	if h < 0 {
		r.flash = "no hunk here: move to one with ] and ["
		return
	}
	if !r.hunkSelect {
		r.flash = "per-hunk accept is not supported by this engine yet: accept or reject the whole file (space)"
		return
	}
	if r.contents[r.files[f].path] != nil {
		r.flash = "this file was edited: it applies as edited (e to edit it again)"
		return
	}
	if r.rejectedHunks[f] == nil {
		r.rejectedHunks[f] = map[int]bool{}
	}
	r.rejectedHunks[f][h] = !r.rejectedHunks[f][h]
	r.fileCursor = f
}

func (r *review) moveFile(d int) {
	if len(r.files) == 0 {
		return
	}
	r.fileCursor = (r.fileCursor + d + len(r.files)) % len(r.files)
	r.dv.jumpFile(r.fileCursor)
}

// syncCursor follows the scroll position with the file cursor.
func (r *review) syncCursor() {
	if len(r.files) > 0 {
		r.fileCursor = int(r.dv.current().file)
	}
}

// allow builds the allowing answer. Where marks are taken it names the
// accepted files (and hunks, when supported); with nothing accepted it
// denies. A proposal is applied once; a write keeps the scope asked for.
func (r *review) allow(scope engine.AnswerScope) *answerAction {
	id := r.ev.RequestID
	if !r.marks {
		return &answerAction{requestID: id, answer: engine.Answer{Decision: engine.DecisionAllow, Scope: scope}}
	}
	if r.patch {
		scope = engine.ScopeOnce
	}
	sel, partial := r.selection()
	if len(sel.Files) == 0 {
		return &answerAction{requestID: id, answer: engine.Answer{Decision: engine.DecisionDeny, Scope: engine.ScopeOnce,
			Feedback: "the reviewer rejected every file"}}
	}
	a := engine.Answer{Decision: engine.DecisionAllow, Scope: scope}
	if len(sel.Files) < len(r.files) || partial {
		a.Patch = &sel
	}
	return &answerAction{requestID: id, answer: a}
}

// selection is what the person accepted: each accepted file with, when
// some of its hunks are rejected, the indexes of those kept, or its
// content when they edited it. partial says some file is not taken as
// proposed.
func (r *review) selection() (sel engine.PatchSelection, partial bool) {
	for i, f := range r.files {
		if !r.accepted[i] {
			continue
		}
		if c, ok := r.contents[f.path]; ok {
			sel.Files = append(sel.Files, engine.FileSelection{Path: f.path, Content: c})
			partial = true
			continue
		}
		rej := r.rejectedHunks[i]
		var keep []int
		for h := range f.hunks {
			if !rej[h] {
				keep = append(keep, h)
			}
		}
		if len(f.hunks) > 0 && len(keep) == 0 {
			continue // every hunk rejected: the file is too
		}
		fs := engine.FileSelection{Path: f.path}
		if r.hunkSelect && len(keep) < len(f.hunks) {
			fs.Hunks, partial = keep, true
		}
		sel.Files = append(sel.Files, fs)
	}
	return sel, partial
}

// fileListRows is how many files the list shows at most.
const fileListRows = 6

// view renders the review in at most maxHeight lines.
func (r *review) view(t *themes.Theme, width, maxHeight, waiting int) string {
	return dialogBox(t, width, r.lines(t, width, maxHeight, waiting))
}

// lines are the review's lines inside the dialog's border.
func (r *review) lines(t *themes.Theme, width, maxHeight, waiting int) []string {
	inner := max(width-4, 10)
	title := t.Warn.Bold(true).Render("⚠ Permission needed: ") + t.Accent.Render(oneLine(r.ev.Tool))
	if r.who != "" {
		title += t.Muted.Render(" · " + r.who)
	}
	if waiting > 0 {
		title += t.Muted.Render(fmt.Sprintf("  (%d more waiting)", waiting))
	}
	a, d := 0, 0
	for _, f := range r.files {
		a += f.added
		d += f.removed
	}
	title += t.Muted.Render(fmt.Sprintf("  %s · ", plural(len(r.files), "file"))) + t.Added.Render(fmt.Sprintf("+%d", a)) + " " + t.Removed.Render(fmt.Sprintf("−%d", d))
	title = ansi.Truncate(title, inner, "…")
	parts := []string{title}
	lay := r.layout(t, width, maxHeight)
	if lay.summary {
		parts = append(parts, t.Text.Render(ansi.Truncate(oneLine(r.summary), inner, "…")))
	}
	parts = append(parts, cut(askedWhy(t, r.ev, inner), lay.whyRows, inner)...)
	if lay.listRows > 0 {
		parts = append(parts, r.fileList(t, inner, lay.listRows)...)
	}
	foot := r.foot(t, inner, lay.compact)
	// A diff shorter than the room left gets a dialog its size, so the
	// transcript above stays in view.
	bodyH := r.dv.fit(inner, lay.room)
	if r.fitH > 0 && bodyH > r.fitH {
		// The window grew: fill the new lines with the diff above rather
		// than blanks below. (Only then: a jump to the last hunk may leave
		// blanks below on purpose, so that the hunk is at the top.)
		r.dv.settle(bodyH)
	}
	r.fitH = bodyH
	// A diff that does not fit says which lines are shown: on a line of
	// its own, like the plain dialog's, when the diff keeps enough lines,
	// else first on the position line, where a cut loses the rest.
	ownLine := false
	if r.scrollNote(bodyH) != "" && bodyH > reviewMinBody {
		bodyH, ownLine = bodyH-1, true
	}
	r.bodyH = bodyH
	parts = append(parts, r.dv.view(inner, bodyH)...)
	f, h := r.dv.hunkAt()
	pos := fmt.Sprintf("file %d/%d", min(f+1, len(r.files)), len(r.files))
	if h >= 0 {
		pos += fmt.Sprintf(" · hunk %d/%d", h+1, len(r.files[f].hunks))
	}
	eff := r.dv.effective(inner)
	pos += " · " + string(eff)
	if r.dv.layout == layoutSplit && eff == layoutUnified {
		pos += " (too narrow for split)"
	}
	note := r.scrollNote(bodyH)
	switch {
	case note != "" && ownLine:
		parts = append(parts, t.Muted.Render(ansi.Truncate(note, inner, "…")))
	case note != "":
		pos = note + " · " + pos
	}
	status := t.Muted.Render(ansi.Truncate(pos, inner, "…"))
	if r.flash != "" {
		status = t.Warn.Render(ansi.Truncate(r.flash, inner, "…"))
	}
	parts = append(parts, status)
	parts = append(parts, foot...)
	return parts
}

// bodyHeight is the diff's height for a dialog of maxHeight lines and
// width columns, for paging before the first frame has measured it.
func (r *review) bodyHeight(t *themes.Theme, width, maxHeight int) int {
	return r.layout(t, width, maxHeight).room
}

// asked says whether the gate gave a stage or reason worth showing: a
// patch proposal is reviewed because of its mode, which the title says.
func (r *review) asked() bool { return r.ev.Stage != "" || r.ev.Reason != "" }

// listFiles says whether the file list is shown: a single file of a
// plain edit is named by the diff's own header, and has no mark to set.
func (r *review) listFiles() bool { return r.marks || len(r.files) > 1 }

// fileList lists rows files around the cursor.
// rejectedCount is how many hunks of file f the person rejected.
func (r *review) rejectedCount(f int) int {
	n := 0
	for _, rej := range r.rejectedHunks[f] {
		if rej {
			n++
		}
	}
	return n
}

func (r *review) fileList(t *themes.Theme, width, rows int) []string {
	start := 0
	if r.fileCursor >= rows {
		start = r.fileCursor - rows + 1
	}
	var out []string
	for i := start; i < len(r.files) && i < start+rows; i++ {
		f := r.files[i]
		mark := "  "
		if r.marks {
			mark = "✓ "
			if !r.accepted[i] {
				mark = "✗ "
			} else if n := r.rejectedCount(i); n > 0 && n == len(f.hunks) {
				// Every hunk rejected: nothing of the file is applied.
				mark = "✗ "
			} else if n > 0 {
				mark = "◐ "
			}
		}
		name := oneLine(f.path)
		if f.oldPath != "" {
			name = oneLine(f.oldPath) + " → " + name
		}
		stats := fmt.Sprintf("+%d −%d", f.added, f.removed)
		if f.binary {
			stats = "binary"
		}
		row := ansi.Truncate(fmt.Sprintf("%s%s %s  %s", mark, opLetter(f.op), name, stats), width, "…")
		if i == r.fileCursor {
			row = t.Selected.Render(row + strings.Repeat(" ", max(width-ansi.StringWidth(row), 0)))
		} else if r.marks && !r.accepted[i] {
			row = t.Muted.Render(row)
		} else {
			row = t.Text.Render(row)
		}
		out = append(out, row)
	}
	if len(r.files) > rows {
		out = append(out, t.Muted.Render(ansi.Truncate(fmt.Sprintf("  … %d files in all · tab/shift+tab to move", len(r.files)), width, "…")))
	}
	return out
}

// reviewKeys are the review's bindings. The answer keys are those of the
// permission dialog, so a person's habits carry over.
type reviewKeys struct {
	Allow, AllowSession, AllowAlways, Deny, DenyMessage key.Binding
	ToggleFile, ToggleHunk                              key.Binding
	NextFile, PrevFile, NextHunk, PrevHunk              key.Binding
	Layout, Edit                                        key.Binding
	Up, Down, PageUp, PageDown                          key.Binding
}

func defaultReviewKeys() reviewKeys {
	return reviewKeys{
		Allow:        key.NewBinding(key.WithKeys("y", "1"), key.WithHelp("y", "allow once")),
		AllowSession: key.NewBinding(key.WithKeys("s", "2"), key.WithHelp("s", "allow for session")),
		AllowAlways:  key.NewBinding(key.WithKeys("a", "3"), key.WithHelp("a", "always allow")),
		Deny:         key.NewBinding(key.WithKeys("n", "4", "esc"), key.WithHelp("n/esc", "reject")),
		DenyMessage:  key.NewBinding(key.WithKeys("m", "5"), key.WithHelp("m", "reject with message")),
		ToggleFile:   key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "accept/reject file")),
		ToggleHunk:   key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "accept/reject hunk")),
		NextFile:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next file")),
		PrevFile:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev file")),
		NextHunk:     key.NewBinding(key.WithKeys("]"), key.WithHelp("]/[", "next/prev hunk")),
		PrevHunk:     key.NewBinding(key.WithKeys("[")),
		Layout:       key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "unified/split")),
		Edit:         key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit in $EDITOR")),
		Up:           key.NewBinding(key.WithKeys("up", "k")),
		Down:         key.NewBinding(key.WithKeys("down", "j")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "b")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "f")),
	}
}

// ShortHelp is the review's key line.
func (k reviewKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Allow, k.AllowSession, k.AllowAlways, k.Deny, k.DenyMessage, k.ToggleFile, k.ToggleHunk,
		k.NextFile, k.NextHunk, k.Layout, k.Edit}
}
