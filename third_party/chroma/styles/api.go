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
// kz fork: the embedded styles are read on the first call to Get, Names or
// Register, not at program start, where reading them cost about 5 ms. Until
// then Registry holds only the fallback style; call Load before reading the
// map directly from several goroutines.
var Registry = map[string]*chroma.Style{}

// Fallback style. Reassign to change the default fallback style.
var Fallback = func() *chroma.Style {
	style := mustRead("swapoff.xml")
	Registry[style.Name] = style
	return style
}()

var loadOnce sync.Once

// Load reads every embedded style into Registry once; styles registered
// before it keep priority (kz fork).
func Load() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			style := mustRead(file.Name())
			if _, ok := Registry[style.Name]; !ok {
				Registry[style.Name] = style
			}
		}
	})
}

func mustRead(name string) *chroma.Style {
	r, err := embedded.Open(name)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	style, err := chroma.NewXMLStyle(r)
	if err != nil {
		panic(err)
	}
	return style
}

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	Load()
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	Load()
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	Load()
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
