package lexers

import (
	"regexp"

	"github.com/alecthomas/chroma/v2"
)

// TODO(moorereason): can this be factored away?
var zoneAnalyserRe = regexp.MustCompile(`(?m)^@\s+IN\s+SOA\s+`)

func init() { // nolint: gochecknoinits
	// kz fork: set when the registry loads, see onLoad.
	onLoad("dns", func(l chroma.Lexer) {
		l.SetAnalyser(func(text string) float32 {
			if zoneAnalyserRe.FindString(text) != "" {
				return 1.0
			}
			return 0.0
		})
	})
}
