package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// SetDefaultRuntime makes name the user's default runtime, and, when rt is
// not nil, defines it as [runtimes.<name>] in the user config at path. It
// is what kz's setup screen writes.
//
// The file is the person's: it is edited as text, never re-encoded, so
// every comment, table and key in it stays as written. A default_runtime
// already there is replaced, its old line kept as a comment; a
// [runtimes.<name>] table already there (with its sub-tables) is commented
// out, not deleted, and the new one appended. The result must decode to
// exactly the old configuration with these two changes, or nothing is
// written and the error says what to add by hand. The file is replaced
// atomically with mode 0600.
func SetDefaultRuntime(path, name string, rt *Runtime) error {
	if !runtimeName().MatchString(name) {
		return fmt.Errorf("runtime name %q: use letters, digits, - and _", name)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	merged, err := MergeDefaultRuntime(path, old, name, rt)
	if err != nil {
		return err
	}
	return WriteUserFile(path, merged)
}

// runtimeName is a runtime name that is a bare TOML key. The expression is
// compiled on first use, so that every kz process does not pay for it at
// start.
var runtimeName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
})

// MergeDefaultRuntime returns old (the user config's bytes, nil for a
// missing file; path only names it in errors) with name as its
// default_runtime and, when rt is not nil, rt as its [runtimes.<name>]
// table. See SetDefaultRuntime.
func MergeDefaultRuntime(path string, old []byte, name string, rt *Runtime) ([]byte, error) {
	before, err := decodeStrict(path, old)
	if err != nil {
		return nil, fmt.Errorf("%w; fix it first, kz has not changed it", err)
	}
	doc, err := scanDocument(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	nl := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		nl = "\r\n"
	}
	lines := doc.lines
	if len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
		lines[len(lines)-1] += nl
	}
	var table string
	if rt != nil {
		if table, err = renderRuntime(name, *rt, nl); err != nil {
			return nil, err
		}
		doc.commentOut(lines, []string{"runtimes", name})
	}
	setLine := fmt.Sprintf("default_runtime = %q%s", name, nl)
	switch {
	case doc.defaultLine >= 0:
		was := strings.TrimRight(lines[doc.defaultLine], "\r\n")
		lines[doc.defaultLine] = "# " + was + "  (replaced by kz setup)" + nl + setLine
	case doc.lastTopLevel >= 0:
		lines[doc.lastTopLevel] += setLine
	default:
		lines = append([]string{setLine}, lines...)
	}
	out := strings.Join(lines, "")
	if table != "" {
		if out != "" {
			out += nl
		}
		out += table
	}
	after, err := decodeStrict(path, []byte(out))
	if err != nil {
		return nil, refuseMerge(path, name, table, err)
	}
	want := before
	want.DefaultRuntime = name
	if rt != nil {
		if want.Runtimes == nil {
			want.Runtimes = map[string]Runtime{}
		}
		want.Runtimes[name] = *rt
	}
	if !reflect.DeepEqual(want, after) {
		return nil, refuseMerge(path, name, table, errors.New("the edited file would not read back as the old one plus the new runtime"))
	}
	return []byte(out), nil
}

// refuseMerge says that kz could not edit the file safely, and what to add
// by hand instead.
func refuseMerge(path, name, table string, why error) error {
	return fmt.Errorf("%s: kz could not add runtime %s safely (%w); nothing was written: add default_runtime = %q at the top and this table by hand:\n%s",
		path, name, why, name, table)
}

// decodeStrict decodes a user config as Load does; nil data is an empty
// file.
func decodeStrict(path string, data []byte) (File, error) {
	var f File
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, positioned(path, err)
	}
	return f, nil
}

// runtimeTable is the part of Runtime the setup screen writes; empty
// fields are left out of the file.
type runtimeTable struct {
	Kind       RuntimeKind `toml:"kind"`
	Provider   string      `toml:"provider,omitempty"`
	BaseURL    string      `toml:"base_url,omitempty"`
	APIKeyEnv  string      `toml:"api_key_env,omitempty"`
	APIKeyFile string      `toml:"api_key_file,omitempty"`
	Models     []string    `toml:"models,omitempty"`
}

// renderRuntime writes rt as a [runtimes.<name>] table. Only the fields
// of runtimeTable may be set: anything else would be silently dropped, so
// it is an error.
func renderRuntime(name string, rt Runtime, nl string) (string, error) {
	t := runtimeTable{Kind: rt.Kind, Provider: rt.Provider, BaseURL: rt.BaseURL, APIKeyEnv: rt.APIKeyEnv,
		APIKeyFile: rt.APIKeyFile, Models: rt.Models}
	back := Runtime{Kind: t.Kind, Provider: t.Provider, BaseURL: t.BaseURL, APIKeyEnv: t.APIKeyEnv, APIKeyFile: t.APIKeyFile, Models: t.Models}
	if !reflect.DeepEqual(back, rt) {
		return "", fmt.Errorf("runtime %s: the setup writes only kind, provider, base_url, api_key_env, api_key_file and models", name)
	}
	body, err := toml.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("runtime %s: %w", name, err)
	}
	s := "# Written by kz setup.\n[runtimes." + name + "]\n" + string(body)
	return strings.ReplaceAll(s, "\n", nl), nil
}

// document is a TOML file cut into lines with where its top-level keys
// and table headers are.
type document struct {
	// lines are the file's lines, each with its line ending.
	lines []string
	// defaultLine is the 0-based line of a top-level default_runtime, or
	// -1; lastTopLevel the last line of the last top-level key, or -1.
	defaultLine, lastTopLevel int
	// headers are the table headers in order.
	headers []header
}

// header is one [table] or [[array]] line.
type header struct {
	line int
	key  []string
}

// scanDocument reads a document the decoder has accepted.
func scanDocument(data []byte) (document, error) {
	d := document{defaultLine: -1, lastTopLevel: -1}
	if len(data) > 0 {
		d.lines = strings.SplitAfter(string(data), "\n")
		if d.lines[len(d.lines)-1] == "" {
			d.lines = d.lines[:len(d.lines)-1]
		}
	}
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		var key []string
		first := -1
		for it := e.Key(); it.Next(); {
			key = append(key, string(it.Node().Data))
			if first < 0 && it.Node().Raw.Length > 0 {
				first = p.Shape(it.Node().Raw).Start.Line - 1
			}
		}
		if first < 0 {
			return d, errors.New("cannot locate a key to edit the file")
		}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			d.headers = append(d.headers, header{line: first, key: key})
		case unstable.KeyValue:
			if len(d.headers) > 0 {
				continue
			}
			end := first
			if v := e.Value(); v != nil && v.Raw.Length > 0 {
				end = p.Shape(v.Raw).End.Line - 1
			} else if v != nil {
				// A container (array, inline table) has no range of its
				// own: a value that may span lines cannot be edited
				// after, so the new key goes before it.
				end = -1
			}
			if len(key) == 1 && key[0] == "default_runtime" {
				if end != first {
					return d, errors.New("default_runtime spans several lines")
				}
				d.defaultLine = first
			}
			if end >= 0 {
				d.lastTopLevel = max(d.lastTopLevel, end)
			}
		}
	}
	if err := p.Error(); err != nil {
		return d, fmt.Errorf("read for editing: %w", err)
	}
	return d, nil
}

// commentOut turns every table under prefix (the table itself and its
// sub-tables, each up to the next header) into comments.
func (d document) commentOut(lines []string, prefix []string) {
	for i, h := range d.headers {
		if len(h.key) < len(prefix) || !reflect.DeepEqual(h.key[:len(prefix)], prefix) {
			continue
		}
		end := len(lines)
		if i+1 < len(d.headers) {
			end = d.headers[i+1].line
		}
		for l := h.line; l < end; l++ {
			if strings.TrimSpace(lines[l]) != "" {
				lines[l] = "# " + lines[l]
			}
		}
		lines[h.line] = "# Replaced by kz setup:\n" + lines[h.line]
	}
}

// KeysDir is the folder of the user config's directory that holds the API
// keys pasted into the setup screen, one file a runtime.
const KeysDir = "keys"

// WriteKeyFile stores an API key for runtime name in
// <configDir>/keys/<name>.key with mode 0600 (the folder 0700), written
// atomically through an os.Root of configDir, and returns the file's
// path. The key is checked first: one line of printable characters.
func WriteKeyFile(configDir, name, key string) (string, error) {
	if !runtimeName().MatchString(name) {
		return "", fmt.Errorf("runtime name %q: use letters, digits, - and _", name)
	}
	key, err := CleanKey(key)
	if err != nil {
		return "", err
	}
	rel := filepath.Join(KeysDir, name+".key")
	if err := writeUnder(configDir, rel, []byte(key+"\n")); err != nil {
		return "", err
	}
	return filepath.Join(configDir, rel), nil
}

// CleanKey trims the blanks a paste brings around a key and refuses one
// that cannot be a key: empty, or with spaces or control characters
// inside (two pasted lines, a stray escape sequence).
func CleanKey(key string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("the key is empty")
	}
	for _, r := range key {
		if r <= ' ' || r == 0x7f {
			return "", errors.New("the key has a space, a line break or a control character in it: paste the key alone")
		}
	}
	return key, nil
}

// WriteUserFile replaces a file of the user config's directory (the
// config itself, a key) atomically with mode 0600.
func WriteUserFile(path string, body []byte) error {
	return writeUnder(filepath.Dir(path), filepath.Base(path), body)
}
