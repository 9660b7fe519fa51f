package patch

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiledSchema compiles the embedded proposal schema with a full JSON
// Schema 2020-12 validator, which also checks that it is a valid schema.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(JSONSchema()))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return s
}

func schemaAccepts(t *testing.T, s *jsonschema.Schema, doc string) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("example is not JSON: %v\n%s", err, doc)
	}
	return s.Validate(inst)
}

// proposalDoc builds a schema-complete proposal around files (JSON
// objects), with every other field set by over (JSON values by name).
func proposalDoc(files []string, over map[string]string) string {
	fields := map[string]string{"summary": `"s"`, "files": "[" + strings.Join(files, ",") + "]",
		"verification": `["go test ./..."]`, "tests": "null", "risks": "[]"}
	for k, v := range over {
		fields[k] = v
	}
	var parts []string
	for _, k := range []string{"summary", "files", "verification", "tests", "risks", "extra"} {
		if v, ok := fields[k]; ok && v != "-" {
			parts = append(parts, `"`+k+`":`+v)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// fileDoc is one schema-complete file entry with over replacing fields;
// a value "-" leaves the field out, and extra keys are added.
func fileDoc(over map[string]string) string {
	fields := map[string]string{"path": `"a.txt"`, "operation": `"modify"`, "new_path": "null", "base_sha256": "null",
		"edits": `[` + editDoc(nil) + `]`, "content": "null", "patch": "null", "mode": "null"}
	order := []string{"path", "operation", "new_path", "base_sha256", "edits", "content", "patch", "mode"}
	for k, v := range over {
		if _, ok := fields[k]; !ok {
			order = append(order, k)
		}
		fields[k] = v
	}
	var parts []string
	for _, k := range order {
		if v := fields[k]; v != "-" {
			parts = append(parts, `"`+k+`":`+v)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func editDoc(over map[string]string) string {
	fields := map[string]string{"search": `"one\n"`, "replace": `"ONE\n"`, "line_hint": "null", "anchor": "null", "at_eof": "null"}
	order := []string{"search", "replace", "line_hint", "anchor", "at_eof"}
	for k, v := range over {
		if _, ok := fields[k]; !ok {
			order = append(order, k)
		}
		fields[k] = v
	}
	var parts []string
	for _, k := range order {
		if v := fields[k]; v != "-" {
			parts = append(parts, `"`+k+`":`+v)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// The schema the structured-output providers get and the parser that
// reads their answers agree: every proposal the schema accepts parses,
// and what the schema refuses for its shape (an unknown field at any
// level, a field of the wrong type, an unknown operation) the parser
// refuses too.
func TestSchemaAndParserAgree(t *testing.T) {
	s := compiledSchema(t)
	valid := map[string]string{
		"edits":              proposalDoc([]string{fileDoc(nil)}, nil),
		"edit with anchor":   proposalDoc([]string{fileDoc(map[string]string{"edits": "[" + editDoc(map[string]string{"anchor": `"func a() {"`, "at_eof": "true", "line_hint": "3"}) + "]"})}, nil),
		"add with content":   proposalDoc([]string{fileDoc(map[string]string{"operation": `"add"`, "edits": "[]", "content": `"new\n"`, "mode": `"100755"`})}, nil),
		"delete":             proposalDoc([]string{fileDoc(map[string]string{"operation": `"delete"`, "edits": "[]"})}, nil),
		"rename":             proposalDoc([]string{fileDoc(map[string]string{"operation": `"rename"`, "new_path": `"b.txt"`, "edits": "[]"})}, nil),
		"unified diff patch": proposalDoc([]string{fileDoc(map[string]string{"edits": "[]", "patch": `"@@ -1 +1 @@\n-one\n+ONE\n"`})}, nil),
		"envelope patch":     proposalDoc([]string{fileDoc(map[string]string{"edits": "[]", "patch": `"*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"`})}, nil),
		"tests":              proposalDoc([]string{fileDoc(nil)}, map[string]string{"tests": `["go vet ./..."]`}),
		"no files":           proposalDoc(nil, map[string]string{"verification": "[]"}),
	}
	for name, doc := range valid {
		t.Run("valid/"+name, func(t *testing.T) {
			if err := schemaAccepts(t, s, doc); err != nil {
				t.Fatalf("the schema refuses its own example: %v\n%s", err, doc)
			}
			if _, err := ParseJSON([]byte(doc)); err != nil {
				t.Errorf("the parser refuses a proposal the schema accepts: %v\n%s", err, doc)
			}
		})
	}
	invalid := map[string]string{
		"unknown top-level field":     proposalDoc([]string{fileDoc(nil)}, map[string]string{"extra": `"x"`}),
		"unknown file field":          proposalDoc([]string{fileDoc(map[string]string{"diff": `"x"`})}, nil),
		"unknown edit field":          proposalDoc([]string{fileDoc(map[string]string{"edits": "[" + editDoc(map[string]string{"why": `"w"`}) + "]"})}, nil),
		"field in another case":       strings.Replace(proposalDoc([]string{fileDoc(nil)}, nil), `"summary"`, `"Summary"`, 1),
		"file field in another case":  proposalDoc([]string{fileDoc(map[string]string{"path": "-", "Path": `"a.txt"`})}, nil),
		"unknown operation":           proposalDoc([]string{fileDoc(map[string]string{"operation": `"move"`})}, nil),
		"files not a list":            proposalDoc(nil, map[string]string{"files": `{"path":"a.txt"}`}),
		"edits not a list":            proposalDoc([]string{fileDoc(map[string]string{"edits": editDoc(nil)})}, nil),
		"line_hint not a number":      proposalDoc([]string{fileDoc(map[string]string{"edits": "[" + editDoc(map[string]string{"line_hint": `"3"`}) + "]"})}, nil),
		"at_eof not a boolean":        proposalDoc([]string{fileDoc(map[string]string{"edits": "[" + editDoc(map[string]string{"at_eof": `"yes"`}) + "]"})}, nil),
		"patch not a string":          proposalDoc([]string{fileDoc(map[string]string{"edits": "[]", "patch": `["@@ -1 +1 @@"]`})}, nil),
		"tests not a list of strings": proposalDoc([]string{fileDoc(nil)}, map[string]string{"tests": `{"cmd":"go test"}`}),
		"summary not a string":        proposalDoc([]string{fileDoc(nil)}, map[string]string{"summary": `["s"]`}),
		"path not a string":           proposalDoc([]string{fileDoc(map[string]string{"path": "7"})}, nil),
		"not an object":               `["summary"]`,
	}
	for name, doc := range invalid {
		t.Run("invalid/"+name, func(t *testing.T) {
			schemaErr := schemaAccepts(t, s, doc)
			_, parseErr := ParseJSON([]byte(doc))
			if schemaErr == nil || parseErr == nil {
				t.Errorf("schema: %v; parser: %v; want both to refuse\n%s", schemaErr, parseErr, doc)
			}
		})
	}
}

// What a model without structured output may write that the strict
// schema would not take, the parser reads anyway, as the prompt's
// leniency promises: fields left out, and one string for a list. This is
// the only way the two differ, and only in the parser's favour.
func TestParserTakesWhatTextModelsWrite(t *testing.T) {
	s := compiledSchema(t)
	for name, doc := range map[string]string{
		"the design documents' proposal": seedProposal,
		"fields left out":                `{"files":[{"path":"a.txt","operation":"modify","edits":[{"search":"one\n","replace":"ONE\n"}]}]}`,
		"a string for a list":            proposalDoc([]string{fileDoc(nil)}, map[string]string{"verification": `"go test ./..."`, "risks": `"none"`}),
	} {
		if schemaAccepts(t, s, doc) == nil {
			t.Errorf("%s: the strict schema accepts it, so it is no leniency", name)
		}
		if _, err := ParseJSON([]byte(doc)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The parser knows exactly the fields the schema declares, at every
// level, and decodes each of them; the schema, written for strict
// structured output, requires every property it has.
func TestSchemaFieldsAreTheParsersFields(t *testing.T) {
	var node schemaNode
	if err := json.Unmarshal([]byte(JSONSchema()), &node); err != nil {
		t.Fatal(err)
	}
	files := node.Properties["files"].Items
	edits := files.Properties["edits"].Items
	levels := []struct {
		name     string
		node     schemaNode
		fields   []string
		decoders []reflect.Type
	}{
		{"proposal", node, knownFields().proposal, []reflect.Type{reflect.TypeFor[wireProposal]()}},
		{"file", *files, knownFields().file, []reflect.Type{reflect.TypeFor[wireFile](), reflect.TypeFor[FileChange]()}},
		{"edit", *edits, knownFields().edit, []reflect.Type{reflect.TypeFor[Edit]()}},
	}
	for _, l := range levels {
		props := make([]string, 0, len(l.node.Properties))
		for k := range l.node.Properties {
			props = append(props, k)
		}
		slices.Sort(props)
		required := slices.Sorted(slices.Values(l.node.Required))
		if !slices.Equal(props, required) {
			t.Errorf("%s: properties %v, required %v: strict structured output needs every property required", l.name, props, required)
		}
		fields := slices.Sorted(slices.Values(l.fields))
		if !slices.Equal(fields, props) {
			t.Errorf("%s: the parser knows %v, the schema declares %v", l.name, fields, props)
		}
		decoded := map[string]bool{}
		for _, typ := range l.decoders {
			for f := range typ.Fields() {
				if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
					decoded[name] = true
				}
			}
		}
		for _, p := range props {
			if !decoded[p] {
				t.Errorf("%s: the schema declares %q but the parser does not decode it", l.name, p)
			}
		}
	}
}
