package diff

import (
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Changed compares two versions of a line character by character (cleaned
// up to whole words where that reads better) and marks, per rune of each,
// whether it is not in the other. It gives up after timeout, returning a
// coarser answer, so a pair of long lines never costs a frame.
func Changed(old, new string, timeout time.Duration) (inOld, inNew []bool) {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = timeout
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(old, new, false))
	inOld, inNew = make([]bool, 0, len(old)), make([]bool, 0, len(new))
	for _, d := range diffs {
		for range d.Text {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				inOld, inNew = append(inOld, false), append(inNew, false)
			case diffmatchpatch.DiffDelete:
				inOld = append(inOld, true)
			case diffmatchpatch.DiffInsert:
				inNew = append(inNew, true)
			}
		}
	}
	return inOld, inNew
}
