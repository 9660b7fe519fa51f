package tui

import (
	"io"
	"strings"

	"github.com/charmbracelet/colorprofile"
)

// quickProfile is the colour profile of out without asking tmux. Inside
// tmux, colour detection runs `tmux info` to learn whether the outer
// terminal has true colour; that subprocess takes tens of milliseconds,
// which would come before the first frame. quickProfile detects from the
// environment and terminfo alone and says whether asking tmux could raise
// the profile, so Run can ask it in the background and upgrade the colours
// a moment after the first frame.
func quickProfile(out io.Writer, env []string) (p colorprofile.Profile, askTmux bool) {
	inTmux := false
	quiet := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMUX=") {
			inTmux = inTmux || kv != "TMUX="
			continue
		}
		quiet = append(quiet, kv)
	}
	p = colorprofile.Detect(out, quiet)
	// NoTTY means the output is no terminal: tmux would not be asked.
	return p, inTmux && p != colorprofile.NoTTY && p < colorprofile.TrueColor
}
