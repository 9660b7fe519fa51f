package thirdparty

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The ultraviolet fork's renderer skips its width-drift check for a cell
// holding one printable ASCII byte of width 1 (terminal_renderer.go,
// lineHasDrift). Upstream's check finds drift in a cell that is wider
// than one column or whose width the terminal's method measures otherwise
// than ansi.StringWidth does, so the skip changes nothing exactly when
// every width method measures each such byte as one column: the premise
// this test holds, for the methods the renderer may be given.
func TestASCIICellsCannotDrift(t *testing.T) {
	for c := byte(0x20); c < 0x7f; c++ {
		s := string([]byte{c})
		for _, m := range []ansi.Method{ansi.GraphemeWidth, ansi.WcWidth} {
			if w := m.StringWidth(s); w != 1 {
				t.Errorf("%q is %d columns under method %v", s, w, m)
			}
		}
		if w := ansi.StringWidth(s); w != 1 {
			t.Errorf("%q is %d columns under ansi.StringWidth", s, w)
		}
	}
}
