package lexers

import (
	"embed"
	"io/fs"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// GlobalLexerRegistry is the global LexerRegistry of Lexers.
//
// kz fork: the embedded XML lexers are read on the first lookup, not at
// program start, where reading them cost about 15 ms.
var GlobalLexerRegistry = chroma.NewLazyLexerRegistry(func() chroma.Lexers {
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	if err != nil {
		panic(err)
	}
	reg := chroma.NewLexerRegistry()
	for _, path := range paths {
		reg.Register(chroma.MustNewXMLLexer(embedded, path))
	}
	for name, apply := range loadHooks {
		apply(reg.Get(name))
	}
	// The lexers written in Go come after the embedded ones, in
	// upstream's order, so that they take precedence over an embedded
	// lexer of the same name as when upstream registered them at start.
	for _, mk := range later {
		reg.Register(mk())
	}
	return reg.Lexers
})

// later makes the lexers written in Go, in the order of their
// declarations (kz fork: upstream built and registered each in package
// initialisation, which read five embedded XML files and built the
// keyword tables of two Lisps at the start of every kz process).
var later []func() chroma.Lexer

// registerLater adds a lexer to be built when the registry loads.
func registerLater(mk func() chroma.Lexer) struct{} {
	later = append(later, mk)
	return struct{}{}
}

// loadHooks change embedded lexers, by name, once they are read; upstream
// changed them in init functions, which would force the read at program
// start (kz fork).
var loadHooks = map[string]func(chroma.Lexer){}

func onLoad(name string, apply func(chroma.Lexer)) { loadHooks[name] = apply }

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return GlobalLexerRegistry.Names(withAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return GlobalLexerRegistry.Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return GlobalLexerRegistry.MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return GlobalLexerRegistry.Match(filename)
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	return GlobalLexerRegistry.Register(lexer)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return GlobalLexerRegistry.Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{`.+`, chroma.Text, nil},
			{`\n`, chroma.Text, nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
