package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/kaizen-code/kz/internal/testfs"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/workspace"
)

func TestRequiredLiteral(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"(?m)EvalSymlinks":                 "EvalSymlinks",
		`(?m)func [A-Z][a-zA-Z]*Context\(`: "Context(",
		"(?m)^package main$":               "package main",
		`(?m)foo\.bar(baz)?`:               "foo.bar",
		"(?mi)EvalSymlinks":                "",
		"(?m)(?i:abc)def":                  "def",
		"(?m)abc|def":                      "",
		"(?m)a.b":                          "",
		"(?m)[0-9]+":                       "",
		"(?m)x*":                           "",
		"(?m)(foo)+bar":                    "bar",
		"(?m)caf\u00e9 ol\u00e9":           "caf\u00e9 ol\u00e9",
		"(?m)(":                            "",
	} {
		if got := string(requiredLiteral(expr)); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", expr, got, want)
		}
	}
}

// TestGrepPrefilterChangesNothing greps a tree with and without the
// literal prefilter for patterns of every kind: the outputs must be
// identical, so the prefilter only ever skips files that cannot match.
func TestGrepPrefilterChangesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a.go":       "package a\n\nfunc NewContext() {}\nfunc newContext() {}\n",
		"b.go":       "package b\n// Context( without func\nfunc F() {}\n",
		"c.txt":      "FOO.BAR\nfoo.bar\nfoo.barbaz\nfooXbar\n",
		"d/e.txt":    "café olé\nCAFÉ OLÉ\n",
		"d/f.txt":    "nothing here\n",
		"g/h/i.txt":  "package main\npackage mainly\n",
		"binary.bin": "Context(\x00\x01",
	}
	testfs.Write(t, dir, files)
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.Close() }()
	env := NewEnv(ws, "s", nil)
	rc := &RunContext{Env: env, Emit: func(engine.Event) {}}
	for _, in := range []map[string]any{
		{"pattern": `func [A-Z][a-zA-Z]*Context\(`},
		{"pattern": `Context\(`},
		{"pattern": `foo\.bar(baz)?`},
		{"pattern": `foo.bar`, "case_insensitive": true},
		{"pattern": `café olé`},
		{"pattern": `café olé`, "case_insensitive": true},
		{"pattern": `^package main$`},
		{"pattern": `(foo)+bar`, "context": 1},
		{"pattern": `nothing|package`, "output_mode": "count"},
	} {
		raw, _ := json.Marshal(in)
		call, err := Grep{}.Prepare(context.Background(), env, raw)
		if err != nil {
			t.Fatal(err)
		}
		gc := call.(*grepCall)
		with, err := gc.Run(context.Background(), rc)
		if err != nil {
			t.Fatal(err)
		}
		gc.must = nil
		without, err := gc.Run(context.Background(), rc)
		if err != nil {
			t.Fatal(err)
		}
		if with != without {
			t.Errorf("%s: prefilter changed the output:\nwith:\n%s\nwithout:\n%s", raw, with, without)
		}
		if bytes.Contains([]byte(with), []byte("binary.bin")) {
			t.Errorf("%s: binary file matched", raw)
		}
	}
}
