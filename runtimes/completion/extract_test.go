package completion

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/patch"
)

// A required property the schema lets be null may be left out (a provider
// that does not enforce the strict proposal schema writes no "tests" where
// a strict one writes null); a required property that cannot be null may
// not, and the error names each one missing.
func TestCheckRequiredLetsNullablePropertiesBeMissing(t *testing.T) {
	schema := json.RawMessage(patch.JSONSchema())
	ok := []string{
		`{"summary":"s","files":[],"verification":[],"tests":null,"risks":[]}`,
		`{"summary":"s","files":[],"verification":[],"risks":[]}`,
	}
	for _, obj := range ok {
		if err := CheckRequired(json.RawMessage(obj), schema); err != nil {
			t.Errorf("%s: %v", obj, err)
		}
	}
	err := CheckRequired(json.RawMessage(`{"summary":"s","tests":["go test"]}`), schema)
	if err == nil || !strings.Contains(err.Error(), "files, verification, risks") {
		t.Errorf("missing non-nullable fields: %v", err)
	}
	own := json.RawMessage(`{"type":"object","required":["a","b"],"properties":{"a":{"type":"null"},"b":{"type":["string"]}}}`)
	if err := CheckRequired(json.RawMessage(`{}`), own); err == nil || !strings.Contains(err.Error(), "(s) b") {
		t.Errorf("a lone null type, a list without null: %v", err)
	}
}
