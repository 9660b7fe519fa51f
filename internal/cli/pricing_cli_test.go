package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestBudgetPricesTokensOfAnyRuntime runs kz -p with --budget-usd on a
// scripted runtime that reports tokens and no cost, as Codex and ACP agents
// do: priced from the catalog, the turn ends over budget with its cost; on
// a model the catalog does not know, kz refuses before the turn starts;
// a [[models]] entry with prices makes that model priced.
func TestBudgetPricesTokensOfAnyRuntime(t *testing.T) {
	sb := newSandbox(t)
	write := func(model string) string {
		p := filepath.Join(t.TempDir(), model+".jsonl")
		body := `{"kz_script":1,"model":"` + model + `","capabilities":["text_completion","streaming_text","native_tool_loop","filesystem_read","filesystem_edit","shell"]}
{"type":"usage_updated","usage":{"input_tokens":300,"output_tokens":60}}
{"type":"text_delta","text":"done"}
`
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	final := func(out string) engine.Event {
		t.Helper()
		evs := streamEvents(t, out)
		return evs[len(evs)-1]
	}

	out, errOut, code := sb.kz("-p", "hi", "--runtime", "scripted", "--script", write("gpt-5-mini"), "--budget-usd", "0.000001", "--output-format", "stream-json")
	if f := final(out); f.Type != engine.EventFinalResult || f.Status != string(engine.StatusBudgetExceeded) || f.CostUSD <= 0 {
		t.Fatalf("exit %d, final %+v\n%s", code, f, errOut)
	}

	out, errOut, code = sb.kz("-p", "hi", "--runtime", "scripted", "--script", write("house-model"), "--budget-usd", "0.5", "--output-format", "stream-json")
	if code == 0 || !strings.Contains(out+errOut, `"house-model" is not in kz's model catalog`) || strings.Contains(out, `"text_delta"`) {
		t.Fatalf("unpriced model with a budget: exit %d\n%s\n%s", code, out, errOut)
	}

	sb.userConfig("[[models]]\nid = \"house-model\"\ninput_per_mtok = 1.0\noutput_per_mtok = 5.0\n")
	out, errOut, code = sb.kz("-p", "hi", "--runtime", "scripted", "--script", write("house-model"), "--budget-usd", "0.5", "--output-format", "stream-json")
	if f := final(out); code != 0 || f.Status != string(engine.StatusComplete) || f.CostUSD != (300*1.0+60*5.0)/1e6 {
		t.Fatalf("exit %d, final %+v\n%s", code, f, errOut)
	}
}
