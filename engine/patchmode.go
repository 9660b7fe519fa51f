package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Patcher turns a model's answer into a reviewable change. In
// patch-proposal mode the session hands it the runtime's final answer;
// main wires it to the patch package, which the engine never imports.
type Patcher interface {
	// Prepare parses and validates a proposal and computes its diffs. It
	// writes nothing. It returns ErrNoProposal when the text holds none.
	Prepare(ctx context.Context, text string) (PreparedPatch, error)
	// Feedback renders a failed proposal for the model: only what failed,
	// with the lines the files really have.
	Feedback(err error) string
}

// PreparedPatch is a validated proposal waiting for the person.
type PreparedPatch interface {
	ID() string
	Summary() string
	Files() []FileChange
	// Paths lists every path the change writes, deletes or renames, both
	// sides of a rename included: the gate judges each of them.
	Paths() []string
	Verification() []string
	// Apply writes what the person took of the change (all of it for the
	// zero selection), all or none, and returns the diffs of what it
	// wrote.
	Apply(ctx context.Context, sel PatchSelection) ([]FileChange, error)
	// Verify runs one verification command in the workspace, under the
	// OS sandbox profile of the gate's answer (c, whose zero value is the
	// strictest).
	Verify(ctx context.Context, c Confinement, command string) (output string, exitCode int, err error)
}

// ErrNoProposal says an answer holds no proposal: the model only talked.
var ErrNoProposal = errors.New("the answer holds no proposal")

// ToolApplyPatch is the tool name under which applying a proposal passes
// the gate. The gate allows it in patch-proposal mode (it is that mode's
// only way to write) and judges its Paths like any write.
const ToolApplyPatch = "apply_patch"

// IsProposal says whether a request applies one of kz's own proposals:
// the engine names the proposal (PatchID) on the request it makes. A
// runtime's own tool of the same name (Codex's file changes are called
// apply_patch) is an ordinary write, which patch-proposal mode refuses.
func IsProposal(r PermissionRequest) bool { return r.Tool == ToolApplyPatch && r.PatchID != "" }

// DefaultPatchRetries is how many times a model is asked to fix a proposal
// that did not apply or did not verify.
const DefaultPatchRetries = 2

// PatchSelection is what the person took of a proposal in the review:
// some of its files and, within a file, some of its hunks, or content they
// wrote themselves. It travels typed on Answer.Patch from the review to
// PreparedPatch.Apply. The zero value takes the whole proposal.
type PatchSelection struct {
	// Files are the accepted files; empty accepts every file whole.
	Files []FileSelection `json:"files,omitempty"`
}

// FileSelection is one accepted file of a PatchSelection.
type FileSelection struct {
	// Path names the file as its FileChange does (a rename by its new
	// path).
	Path string `json:"path"`
	// Hunks, when not nil, keeps only these hunks of the file: 0-based
	// indexes into the hunks of its FileChange.Diff in diff order, as
	// internal/diff's FileHunks reads them; the review numbers them and
	// the patcher applies them with that one reader, from that one text.
	// A file keeps at least one hunk; nil keeps them all.
	Hunks []int `json:"hunks,omitempty"`
	// Content, when not nil, is the whole new content the person wrote
	// in their editor during the review, applied in place of the
	// proposal's (Hunks is then moot).
	Content []byte `json:"content,omitempty"`
}

// Paths are the accepted files' paths, nil for the whole proposal.
func (s PatchSelection) Paths() []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

// partialNote says, after a proposal's summary, what of it the person did
// not take: the files left out and the files applied with hunks rejected.
// The note travels with patch_applied into the transcript, so the next
// turn's model (any runtime) knows the change was not applied whole.
func partialNote(proposed, applied []FileChange, sel PatchSelection) string {
	got := map[string]bool{}
	for _, f := range applied {
		got[f.Path] = true
	}
	trimmedHunks := map[string]bool{}
	for _, f := range sel.Files {
		trimmedHunks[f.Path] = f.Hunks != nil
	}
	var left, trimmed []string
	for _, f := range proposed {
		switch {
		case !got[f.Path]:
			left = append(left, f.Path)
		case trimmedHunks[f.Path]:
			trimmed = append(trimmed, f.Path)
		}
	}
	var parts []string
	if len(left) > 0 {
		parts = append(parts, fmt.Sprintf("applied %d of %d files; not applied: %s", len(proposed)-len(left), len(proposed), strings.Join(left, ", ")))
	}
	if len(trimmed) > 0 {
		parts = append(parts, "some hunks rejected in "+strings.Join(trimmed, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// reviewPatch takes a patch-proposal answer through review, apply and
// verification. It returns feedback for the model when the proposal failed
// in a way the model can fix, and "" when there is nothing more to do.
func (s *Session) reviewPatch(ctx context.Context, ts *turnState, text string) string {
	t := ts.turn
	p, err := s.patcher.Prepare(ctx, text)
	if errors.Is(err, ErrNoProposal) {
		return ""
	}
	if err != nil {
		fb := s.patcher.Feedback(err)
		s.emit(Event{Type: EventPatchRejected, TurnID: t.ID, Reason: "invalid", Text: fb})
		return fb
	}
	files := p.Files()
	// The gate sees every touched path, not only the displayed ones: a
	// rename deletes its source, which must be judged like any write.
	paths := p.Paths()
	var diff strings.Builder
	for _, f := range files {
		diff.WriteString(f.Diff)
	}
	s.emit(Event{Type: EventPatchProposed, TurnID: t.ID, PatchID: p.ID(), Files: files, Text: p.Summary(),
		Command: strings.Join(p.Verification(), "\n")})
	a := t.RequestPermission(ctx, PermissionRequest{ToolCallID: p.ID(), Tool: ToolApplyPatch, Paths: paths, Write: true,
		Diff: diff.String(), PatchID: p.ID()})
	if !a.Allowed() {
		s.emit(Event{Type: EventPatchRejected, TurnID: t.ID, PatchID: p.ID(), Reason: "declined", Text: firstNonEmpty(a.Feedback, a.Reason)})
		return ""
	}
	var sel PatchSelection
	if a.Patch != nil {
		sel = *a.Patch
	}
	applied, err := p.Apply(ctx, sel)
	if err != nil {
		fb := s.patcher.Feedback(err)
		s.emit(Event{Type: EventPatchRejected, TurnID: t.ID, PatchID: p.ID(), Reason: "apply failed", Text: fb})
		return fb
	}
	s.emit(Event{Type: EventPatchApplied, TurnID: t.ID, PatchID: p.ID(), Files: applied, Text: p.Summary() + partialNote(files, applied, sel)})
	for _, f := range applied {
		s.emit(Event{Type: EventFileEdited, TurnID: t.ID, PatchID: p.ID(), Path: f.Path, Diff: f.Diff})
	}
	var failed []string
	for i, cmd := range p.Verification() {
		if ctx.Err() != nil {
			break
		}
		// Each verification command is a call of its own: its answer and
		// its command events share an id, so a front end shows them as
		// one, and an interrupted command is closed with the turn.
		id := fmt.Sprintf("%s/verify/%d", p.ID(), i+1)
		a := t.RequestPermission(ctx, PermissionRequest{ToolCallID: id, Tool: "bash", Command: cmd, Internal: true, PatchID: p.ID()})
		if !a.Allowed() {
			continue
		}
		s.emit(Event{Type: EventCommandStarted, TurnID: t.ID, PatchID: p.ID(), ToolCallID: id, Tool: "bash", Command: cmd})
		out, code, err := p.Verify(ctx, a.Confinement, cmd)
		if err != nil {
			out = strings.TrimSpace(out + "\n" + err.Error())
			if code == 0 {
				code = -1
			}
		}
		s.emit(Event{Type: EventCommandFinished, TurnID: t.ID, PatchID: p.ID(), ToolCallID: id, Tool: "bash", Command: cmd,
			ExitCode: &code, Output: out, IsError: code != 0})
		if code != 0 {
			failed = append(failed, fmt.Sprintf("`%s` exited with %d:\n%s", cmd, code, tail(out, 4000)))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return "Your change was applied, but verification failed. Propose a fix for these failures only:\n\n" + strings.Join(failed, "\n\n")
}

// proposalLoop runs the review of a patch-proposal turn and, while the
// model can fix what failed, asks it again with only the feedback.
func (s *Session) proposalLoop(ctx context.Context, ts *turnState, attempts []attempt, res Result) (Result, error) {
	retries := s.patchRetries
	for round := 0; ; round++ {
		fb := s.reviewPatch(ctx, ts, res.Output)
		if fb == "" || round >= retries || ctx.Err() != nil {
			return res, nil
		}
		ts.turn.Prompt = fb
		s.mu.Lock()
		n := len(s.transcript.Entries)
		ts.history, ts.histLen = CompactedHistory(RewoundHistory(s.transcript.Entries[:n:n])), n
		s.mu.Unlock()
		next, err := s.runAttempts(ctx, ts, attempts[:1])
		if err != nil {
			return next, err
		}
		res = next
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// tail keeps the last n bytes of s, where test failures usually are.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
