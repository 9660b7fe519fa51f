package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	type in struct {
		Path  string `json:"path"`
		Limit int    `json:"limit,omitempty"`
		All   bool   `json:"replace_all,omitempty"`
	}
	bad := map[string]string{
		"unknown field":       `{"path":"a","mode":"x"}`,
		"case variant":        `{"PATH":"a"}`,
		"case variant second": `{"path":"a","Path":"../x"}`,
		"duplicate key":       `{"path":"a","path":"../x"}`,
		"trailing object":     `{"path":"a"}{"path":"b"}`,
		"trailing garbage":    `{"path":"a"} x`,
		"string for int":      `{"path":"a","limit":"5"}`,
		"float for int":       `{"path":"a","limit":1.5}`,
		"number for string":   `{"path":5}`,
		"array for string":    `{"path":["a"]}`,
		"string for bool":     `{"path":"a","replace_all":"true"}`,
		"array input":         `[{"path":"a"}]`,
		"string input":        `"a"`,
		"null input":          `null`,
		"empty input":         ``,
		"truncated":           `{"path":"a"`,
		"escaped duplicate":   `{"path":"a","p\u0061th":"../x"}`,
		"object for string":   `{"path":{"x":"a"}}`,
		"bool for int":        `{"path":"a","limit":true}`,
		"int for bool":        `{"path":"a","replace_all":1}`,
		"exponent for int":    `{"path":"a","limit":1e3}`,
		"overflowing int":     `{"path":"a","limit":99999999999999999999}`,
		"nested unknown":      `{"path":"a","extra":{"path":"b"}}`,
		"comment":             `{"path":"a" /* x */}`,
		"single quotes":       `{'path':'a'}`,
	}
	for name, s := range bad {
		var v in
		if err := DecodeStrict(json.RawMessage(s), &v); err == nil {
			t.Errorf("%s: %s decoded to %+v", name, s, v)
		}
	}
	var v in
	if err := DecodeStrict(json.RawMessage(` {"path":"a","limit":3,"replace_all":true} `), &v); err != nil || v != (in{"a", 3, true}) {
		t.Fatalf("good input: %+v %v", v, err)
	}
}

func TestSpecDefaultsFailClosed(t *testing.T) {
	t.Parallel()
	var s ToolSpec
	if s.ReadOnly || s.ConcurrencySafe || !s.RequiresPermission() || s.Exposure.Visible() {
		t.Fatalf("zero spec does not fail closed: %+v", s)
	}
	if s.MaxResult() != DefaultMaxResult {
		t.Fatal("zero spec has no result limit")
	}
}

func TestBuiltinSpecs(t *testing.T) {
	t.Parallel()
	reg := NewBuiltinRegistry()
	want := map[string]bool{"read_file": true, "list_dir": true, "glob": true, "grep": true,
		"write_file": false, "edit_file": false, "bash": false}
	for name, ro := range want {
		tl, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		s := tl.Spec()
		if s.ReadOnly != ro || s.ConcurrencySafe != ro || !s.RequiresPermission() {
			t.Errorf("%s: %+v", name, s)
		}
		if strings.HasPrefix(s.Description, "(no description") || len(s.Description) < 40 {
			t.Errorf("%s: description %q", name, s.Description)
		}
		var schema map[string]any
		if err := json.Unmarshal(s.Schema, &schema); err != nil || schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: schema %s", name, s.Schema)
		}
	}
	names := func(specs []ToolSpec) string {
		var n []string
		for _, s := range specs {
			n = append(n, s.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(reg.List(engine.ModeAnalysisOnly)); got != "read_file,list_dir,glob,grep,web_fetch" {
		t.Errorf("analysis-only: %s", got)
	}
	if got := names(reg.List(engine.ModePatchProposal)); got != "read_file,list_dir,glob,grep,web_fetch" {
		t.Errorf("patch-proposal: %s", got)
	}
	if got := names(reg.List(engine.ModeFullAutonomous)); got != "read_file,write_file,edit_file,list_dir,glob,grep,bash,web_fetch" {
		t.Errorf("full-autonomous: %s", got)
	}
	filtered := reg.Filter(func(n string) bool { return n == "bash" || n == "write_file" })
	if got := names(filtered.List(engine.ModeFullAutonomous)); got != "read_file,edit_file,list_dir,glob,grep,web_fetch" {
		t.Errorf("filtered: %s", got)
	}
	if _, ok := filtered.Lookup("bash"); ok {
		t.Error("filtered registry still runs bash")
	}
	if err := reg.Register(Bash{}); err == nil {
		t.Error("duplicate registration accepted")
	}
}

// hiddenTool has a zero exposure.
type hiddenTool struct{ Bash }

func (hiddenTool) Spec() ToolSpec { return ToolSpec{Name: "hidden"} }

func TestDisabledToolNotRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, hiddenTool{})
	r := f.call(t, "hidden", map[string]any{"command": "touch ran"})
	if !r.IsError || !strings.Contains(r.Output, "unknown tool") {
		t.Fatalf("got %+v", r)
	}
	if _, err := f.ws.Lstat("ran"); err == nil {
		t.Fatal("disabled tool ran")
	}
	if got := len(f.ex.Registry().List(engine.ModeFullAutonomous)); got != 8 {
		t.Errorf("hidden tool listed: %d", got)
	}
}
