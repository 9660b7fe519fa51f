package patch

import (
	"fmt"

	"github.com/kaizen-code/kz/internal/diff"
)

// FileDiff is the review data of one file: a unified diff and its stats.
// It mirrors engine.FileChange, which the engine fills from it.
type FileDiff struct {
	Path      string    `json:"path"`
	NewPath   string    `json:"new_path,omitempty"`
	Operation Operation `json:"operation"`
	Diff      string    `json:"diff"`
	Added     int       `json:"added"`
	Removed   int       `json:"removed"`
}

// Preview renders every file of a plan as a unified diff. It only reads
// the plan; internal/diff computes the diff and never applies anything.
func Preview(plan *Plan) []FileDiff {
	out := make([]FileDiff, 0, len(plan.Files))
	for _, f := range plan.Files {
		df := diff.File{OldPath: f.Path, NewPath: f.Path, Hunks: diff.Hunks(f.OldContent, f.NewContent)}
		switch f.Operation {
		case OpAdd:
			df.OldPath = diff.DevNull
		case OpDelete:
			df.NewPath = diff.DevNull
		case OpRename:
			df.NewPath = f.NewPath
		}
		if f.Existed && f.NewContent != nil && f.NewMode != f.OldMode {
			df.OldMode, df.NewMode = fmt.Sprintf("%o", 0o100000|f.OldMode), fmt.Sprintf("%o", 0o100000|f.NewMode)
		}
		added, removed := df.Stat()
		out = append(out, FileDiff{Path: f.Path, NewPath: f.NewPath, Operation: f.Operation, Diff: diff.Format(df),
			Added: added, Removed: removed})
	}
	return out
}
