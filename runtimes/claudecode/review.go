package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools"
)

// preview is what a write tool would change, computed before the person
// decides: the file's content now, its content after the tool, and the
// unified diff between them that the review shows.
type preview struct {
	old, next string
	existed   bool
	diff      string
	// complete says old is the whole file (not cut at maxPreviewRead), so
	// that a part of the change can be rebuilt from it exactly.
	complete bool
}

// maxPreviewRead bounds how much of a file is read for a preview diff.
const maxPreviewRead = 1 << 20

// previewWrite previews what a write tool would change, for the person
// deciding. It reads the file but never writes it. It returns nil for a
// tool whose result kz does not compute (NotebookEdit).
func previewWrite(tool string, in toolInput, path, ws string) *preview {
	old, existed, complete := readBounded(path)
	var next string
	switch tool {
	case "Write":
		next = in.Content
	case "Edit":
		next = replace(old, in.OldString, in.NewString, in.ReplaceAll)
	case "MultiEdit":
		next = old
		for _, e := range in.Edits {
			next = replace(next, e.OldString, e.NewString, e.ReplaceAll)
		}
	default:
		return nil
	}
	return &preview{old: old, next: next, existed: existed, complete: complete,
		diff: tools.UnifiedDiff(relTo(path, ws), []byte(old), []byte(next), existed)}
}

// keptInput rewrites a write tool's input so that the CLI writes exactly
// what the person kept of the change (sel, from the review). Claude's
// permission answer can replace the tool's input (updatedInput) but not
// the tool: a Write gets the kept content; an Edit gets the whole file as
// old_string and the kept content as new_string, which matches exactly
// once (a string occurs in itself only at its start) and yields exactly
// the kept content; a MultiEdit gets that pair as its one edit. Other
// fields of the input are kept. It returns nil input when nothing of the
// change is kept.
func keptInput(tool string, input json.RawMessage, pv *preview, sel *engine.PatchSelection) (json.RawMessage, error) {
	if !pv.complete {
		return nil, fmt.Errorf("the file is larger than %d bytes, so only the whole edit can be taken", maxPreviewRead)
	}
	k, err := tools.KeptContent(sel, []byte(pv.old), pv.diff)
	switch {
	case err != nil:
		return nil, err
	case k.Whole:
		return input, nil
	case k.Unchanged([]byte(pv.old)) && pv.existed:
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the tool input is no JSON object: %w", err)
	}
	kept := string(k.Content)
	switch tool {
	case "Write":
		m["content"] = kept
	case "Edit":
		m["old_string"], m["new_string"], m["replace_all"] = pv.old, kept, false
	case "MultiEdit":
		m["edits"] = []map[string]any{{"old_string": pv.old, "new_string": kept, "replace_all": false}}
	default:
		return nil, fmt.Errorf("%s cannot take part of a change", tool)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode the kept input: %w", err)
	}
	return out, nil
}

func replace(s, old, new string, all bool) string {
	if old == "" {
		return s
	}
	if all {
		return strings.ReplaceAll(s, old, new)
	}
	return strings.Replace(s, old, new, 1)
}

// readBounded reads at most maxPreviewRead bytes of a regular file. It
// says whether the file existed and whether the content is all of it.
func readBounded(path string) (content string, existed, complete bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "", false, err != nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", true, false
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxPreviewRead+1))
	if err != nil || len(b) > maxPreviewRead {
		return string(b[:min(len(b), maxPreviewRead)]), true, false
	}
	return string(b), true, true
}
