package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines maps the key paths of one TOML document to the line each is
// written on, so that a value found bad after decoding (a negative limit,
// an unknown runtime kind, a malformed rule) is reported as file:line like
// the decoder's own errors. Paths are dotted TOML keys; an element of an
// array, or of an array of tables, is its 0-based index: "limits.max_cycles",
// "runtimes.demo.kind", "models.1.id", "permissions.allow.0", "failover.2".
type keyLines struct {
	file  string
	lines map[string]int
	// runtimes lists the names of the [runtimes.*] tables in the order the
	// file first writes them. TOML tables decode into a Go map, which
	// forgets that order, and the selector breaks ties by it.
	runtimes *[]string
}

// indexLines reads data, which the decoder has already accepted, and
// records the line of every key, table and array element. A document the
// parser cannot read leaves the index partial: errors then name the file
// without a line, never a wrong line.
func indexLines(file string, data []byte) keyLines {
	k := keyLines{file: file, lines: map[string]int{}, runtimes: &[]string{}}
	var p unstable.Parser
	p.Reset(data)
	var prefix []string
	arrays := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			prefix = nil
			line := 0
			for it := e.Key(); it.Next(); {
				prefix = append(prefix, string(it.Node().Data))
				line = k.lineOf(&p, it.Node(), line)
			}
			k.noteRuntime(prefix)
			if e.Kind == unstable.ArrayTable {
				base := strings.Join(prefix, ".")
				prefix = append(prefix, strconv.Itoa(arrays[base]))
				arrays[base]++
			}
			k.record(strings.Join(prefix, "."), line)
		case unstable.KeyValue:
			k.keyValue(&p, e, prefix)
		}
	}
	return k
}

// keyValue records a key = value pair under prefix, and the keys and
// elements inside its value (inline tables, arrays).
func (k keyLines) keyValue(p *unstable.Parser, kv *unstable.Node, prefix []string) {
	path := append([]string(nil), prefix...)
	line := 0
	for it := kv.Key(); it.Next(); {
		path = append(path, string(it.Node().Data))
		line = k.lineOf(p, it.Node(), line)
		k.record(strings.Join(path, "."), line)
	}
	k.noteRuntime(path)
	k.value(p, kv.Value(), path, line)
}

func (k keyLines) value(p *unstable.Parser, v *unstable.Node, path []string, line int) {
	switch v.Kind {
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if it.Node().Kind == unstable.KeyValue {
				k.keyValue(p, it.Node(), path)
			}
		}
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); i++ {
			el := path[:len(path):len(path)]
			el = append(el, strconv.Itoa(i))
			l := k.lineOf(p, it.Node(), line)
			k.record(strings.Join(el, "."), l)
			k.value(p, it.Node(), el, l)
		}
	}
}

// noteRuntime records the runtime a key path names (runtimes.<name>...),
// once, in order of first appearance. It works on the key's parts, so a
// quoted name with a dot in it stays one name.
func (k keyLines) noteRuntime(path []string) {
	if k.runtimes == nil || len(path) < 2 || path[0] != "runtimes" {
		return
	}
	if !slices.Contains(*k.runtimes, path[1]) {
		*k.runtimes = append(*k.runtimes, path[1])
	}
}

// runtimeOrder returns the names of m in the order the file wrote them;
// a name the index missed (a file it could not read) follows, sorted.
func (k keyLines) runtimeOrder(names []string) []string {
	var out []string
	if k.runtimes != nil {
		for _, n := range *k.runtimes {
			if slices.Contains(names, n) {
				out = append(out, n)
			}
		}
	}
	rest := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(out, n) })
	slices.Sort(rest)
	return append(out, rest...)
}

// lineOf is the line a node starts on, or fallback when the parser kept
// no position for it (containers such as arrays and inline tables).
func (k keyLines) lineOf(p *unstable.Parser, n *unstable.Node, fallback int) int {
	if n.Raw.Length == 0 {
		return fallback
	}
	return p.Shape(n.Raw).Start.Line
}

// record keeps the first line of a path: a table may be named again
// later by a dotted key, but it was first written where it starts.
func (k keyLines) record(path string, line int) {
	if _, ok := k.lines[path]; !ok && line > 0 {
		k.lines[path] = line
	}
}

// at is "file:line" for key, using the line of the longest prefix of key
// that the index knows, or "file" when it knows none.
func (k keyLines) at(key string) string {
	for p := key; p != ""; {
		if l, ok := k.lines[p]; ok {
			return fmt.Sprintf("%s:%d", k.file, l)
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return k.file
}

// errorf reports a bad value: "file:line: key: message".
func (k keyLines) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", k.at(key), key, fmt.Errorf(format, args...))
}

// wrap reports err about key: "file:line: key: err".
func (k keyLines) wrap(key string, err error) error {
	return fmt.Errorf("%s: %s: %w", k.at(key), key, err)
}

// typeMismatch matches go-toml's message for a value of the wrong type,
// which names Go types: "cannot decode TOML string into struct field
// config.Limits.MaxCycles of type int". The expression is compiled on first
// use, so that every kz process does not pay for it at start.
var typeMismatch = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`cannot decode TOML ([a-z ]+?) into .* of type (\S+)$`)
})

// decodeMessage rewrites a decoder error in the file's terms: the TOML key,
// what it wants and what it got, never the Go names behind them.
func decodeMessage(de *toml.DecodeError) string {
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	key := strings.Join(de.Key(), ".")
	if m := typeMismatch().FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("want %s, got %s", goTypeWord(m[2]), withArticle(m[1]))
	}
	if key == "" {
		return msg
	}
	return key + ": " + msg
}

// fileTypes are the Go types a configuration file decodes into, by the
// name go-toml's messages give them ("config.RuntimeKind"). The map is
// built on first use, so that every kz process does not pay for the walk
// at start.
var fileTypes = sync.OnceValue(func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if _, seen := m[t.String()]; seen {
			return
		}
		m[t.String()] = t
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				walk(t.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeFor[File]())
	walk(reflect.TypeFor[grantsDoc]())
	return m
})

// goTypeWord names, for a person, the kind of TOML value a Go type takes.
func goTypeWord(name string) string {
	t, ok := fileTypes()[name]
	if !ok {
		return "another type of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[Duration]() {
		return `a duration string such as "30s"`
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "a table"
	}
}

func withArticle(s string) string {
	if s != "" && strings.ContainsAny(s[:1], "aeiou") {
		return "an " + s
	}
	return "a " + s
}

// errorsAsDecode is errors.As for the decoder's positioned error.
func errorsAsDecode(err error) (*toml.DecodeError, bool) {
	var de *toml.DecodeError
	ok := errors.As(err, &de)
	return de, ok
}
