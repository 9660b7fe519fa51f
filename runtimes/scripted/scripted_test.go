package scripted

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"type":"text_delta","text":"a"}` + "\n" + `{"type":"text_delta","txt":"b"}`, `s.jsonl:2: malformed line: json: unknown field "txt"`},
		{"\n// comment\n{\"type\":\"nonsense\"}", `s.jsonl:3: unknown event type "nonsense"`},
		{`{"text":"no type"}`, `s.jsonl:1: line has neither an event "type" nor a directive`},
		{`{"type":"text_delta","cycle":true}`, "s.jsonl:1: a line is one event or one directive"},
		{`{"type":"text_delta","when":"maybe"}`, `s.jsonl:1: "when" must be "allow" or "deny"`},
		{`{"fail":{}}`, `s.jsonl:1: "fail" needs a "kind"`},
		{`{"kz_script":2}`, "s.jsonl:1: bad header: kz_script version 2"},
		{`{"kz_script":1,"capabilities":["telepathy"]}`, `s.jsonl:1: bad header: malformed line: unknown capability "telepathy"`},
		{`{"type":"text_delta"} {"type":"text_delta"}`, "s.jsonl:1: malformed line: trailing data"},
		{`{"type":"text_delta","delay_ms":-1}`, "s.jsonl:1: delay_ms, repeat and sleep_ms cannot be negative"},
		{"{\"type\":", "s.jsonl:1: malformed line"},
	}
	for _, c := range cases {
		_, err := Parse("s", "s.jsonl", strings.NewReader(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.body, err, c.want)
		}
	}
}

func TestHeaderDeclaresCapabilitiesAndSegments(t *testing.T) {
	rt, err := Parse("s", "s.jsonl", strings.NewReader(`{"kz_script":1,"model":"tiny","capabilities":["text_completion"],"context_window":4096}
{"type":"assistant_message","text":"one"}
{"end_turn":true}
{"type":"assistant_message","text":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	caps := rt.Capabilities("")
	if caps.Set != engine.NewCapSet(engine.CapTextCompletion) || caps.ContextWindow != 4096 || rt.Model() != "tiny" {
		t.Fatalf("caps %+v model %s", caps, rt.Model())
	}
	if len(rt.segments) != 2 {
		t.Fatalf("%d segments", len(rt.segments))
	}
	plain, err := Parse("p", "p.jsonl", strings.NewReader(`{"type":"assistant_message","text":"x"}`))
	if err != nil || plain.Capabilities("").Set != FullAgent {
		t.Fatalf("headerless script: %v %v", err, plain.Capabilities(""))
	}
}
