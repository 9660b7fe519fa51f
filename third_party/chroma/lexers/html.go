package lexers

import (
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// HTML lexer, which the lexers of templates embedding HTML delegate to.
// kz fork: read on first use, not at program start; upstream's HTML is a
// variable.
var HTML = sync.OnceValue(func() *chroma.RegexLexer { return chroma.MustNewXMLLexer(embedded, "embedded/html.xml") })
