package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

// Registry of Styles.
//
// kz fork: upstream fills Registry with every embedded style in package
// initialisation, which parsed them at the start of every kz process.
// Here the embedded styles are added on the first Get, Register, Names or
// Fallback (a style written into the map directly before then keeps its
// name, as if it had been registered after them), and Fallback is a
// function.
var Registry = map[string]*chroma.Style{}

var loadOnce sync.Once

// load adds the embedded styles to Registry, once.
func load() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			r, err := embedded.Open(file.Name())
			if err != nil {
				panic(err)
			}
			style, err := chroma.NewXMLStyle(r)
			if err != nil {
				panic(err)
			}
			if _, ok := Registry[style.Name]; !ok {
				Registry[style.Name] = style
			}
			_ = r.Close()
		}
	})
}

// Fallback style (kz fork: a function, see Registry).
func Fallback() *chroma.Style {
	load()
	return Registry["swapoff"]
}

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	load()
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	out := []string{}
	load()
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	load()
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback()
}
