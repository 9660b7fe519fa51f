package runtimes

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes/completion"
	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/native"
)

// The reasoning keys of a runtime entry reach the runtime, --reasoning
// replaces them, a bad value is an error naming the runtime, and the
// session's toggle reaches every LLM runtime.
func TestReasoningSettingsFromConfig(t *testing.T) {
	t.Setenv("KZ_TEST_KEY", "sk")
	rc := config.Runtime{Kind: config.KindNative, Provider: "anthropic", APIKeyEnv: "KZ_TEST_KEY", BaseURL: "https://api.example.invalid",
		Models: []string{"claude-sonnet-4-5", "claude-opus-4-5"}, Reasoning: "medium", ModelReasoning: map[string]string{"claude-opus-4-5": "30000"}}
	e, err := Build("n", rc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt := e.Runtime.(*native.Runtime)
	if got := rt.Reasoning("claude-sonnet-4-5"); got != (llm.ReasoningSetting{Effort: llm.ReasoningMedium}) {
		t.Errorf("runtime setting: %+v", got)
	}
	if got := rt.Reasoning("claude-opus-4-5"); got != (llm.ReasoningSetting{Budget: 30000}) {
		t.Errorf("model setting: %+v", got)
	}
	e, err = Build("n", rc, Options{Reasoning: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Runtime.(*native.Runtime).Reasoning("claude-opus-4-5"); got.Effort != llm.ReasoningOff {
		t.Errorf("--reasoning off did not replace the model's setting: %+v", got)
	}
	for _, bad := range []config.Runtime{{Reasoning: "extreme"}, {ModelReasoning: map[string]string{"m": "12"}}} {
		bad.Kind, bad.Provider, bad.APIKeyEnv, bad.Models = config.KindNative, "anthropic", "KZ_TEST_KEY", []string{"claude-sonnet-4-5"}
		if _, err := Build("bad", bad, Options{}); err == nil || !strings.Contains(err.Error(), "runtime bad") {
			t.Errorf("bad reasoning accepted: %v", err)
		}
	}
	comp := rc
	comp.Kind = config.KindCompletion
	ce, err := Build("c", comp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ce.Runtime.(*completion.Runtime); !ok {
		t.Fatalf("completion runtime is %T", ce.Runtime)
	}
	n, err := SetReasoning([]engine.RuntimeEntry{e, ce}, "high")
	if err != nil || n != 2 {
		t.Fatalf("SetReasoning reached %d runtimes: %v", n, err)
	}
	if got := e.Runtime.(*native.Runtime).Reasoning("claude-opus-4-5"); got.Effort != llm.ReasoningHigh {
		t.Errorf("toggle did not reach the native runtime: %+v", got)
	}
	if _, err := SetReasoning(nil, "lots"); err == nil {
		t.Error("SetReasoning accepted a bad value")
	}
}
