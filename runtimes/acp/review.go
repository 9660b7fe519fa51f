package acp

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
)

// keptWrites resolves what the person kept of an edit the agent asked
// about (sel, from the review; nil keeps everything) into the writes kz
// expects next, one per diff of the call, keyed by workspace-relative
// path. An agent writes an edit through fs/write_text_file with the
// content it announced; kz then writes the kept content instead (see
// writeFile), so the person's selection is what lands on disk. It returns
// nil when the person kept no change at all.
func (tr *turnRun) keptWrites(c toolCall, sel *engine.PatchSelection) (map[string]allowedWrite, error) {
	out := map[string]allowedWrite{}
	diffs, changed := 0, false
	for _, d := range c.Content {
		if d.Type != "diff" || d.Path == "" {
			continue
		}
		diffs++
		rel := tr.rel(d.Path)
		var old []byte
		if d.OldText != nil {
			old = []byte(*d.OldText)
		}
		k, err := tools.KeptContent(sel, old, unifiedDiff(rel, d.OldText, d.NewText))
		if err != nil {
			return nil, err
		}
		w := allowedWrite{content: d.NewText, toolID: c.ToolCallID}
		if !k.Whole {
			w.kept = append([]byte{}, k.Content...)
		}
		changed = changed || k.Whole || !k.Unchanged(old)
		out[rel] = w
	}
	if diffs > 0 && !changed {
		return nil, nil
	}
	return out, nil
}

// keptOfWrite resolves what the person kept of a write the agent made
// without asking first (fs/write_text_file): nil for all of it, else the
// file's content with only the kept hunks of fileDiff applied. The hunks
// must still match the file as it is, or nothing is written.
func keptOfWrite(env *tools.Env, rel, fileDiff string, sel *engine.PatchSelection) ([]byte, error) {
	if sel == nil {
		return nil, nil
	}
	old, _, err := env.WS.ReadFile(rel, tools.MaxWriteBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	k, err := tools.KeptContent(sel, old, fileDiff)
	switch {
	case err != nil:
		return nil, err
	case k.Whole:
		return nil, nil
	case k.Unchanged(old):
		return nil, errors.New("the person rejected every change")
	}
	return append([]byte{}, k.Content...), nil
}
