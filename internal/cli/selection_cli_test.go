package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// selectionConfig writes three scripted runtimes, in an order that is not
// alphabetical, with hints that make each strategy pick a different one:
// zeta is first in the file and dear, alpha is the cheapest, mid has no
// price and the lowest latency. strategy and defaultRuntime head the file.
func selectionConfig(t *testing.T, sb *sandbox, strategy, defaultRuntime string) {
	t.Helper()
	dir := t.TempDir()
	hints := map[string]string{
		"zeta":  `"input_per_mtok":10,"output_per_mtok":50,"latency_ms":900`,
		"alpha": `"input_per_mtok":1,"output_per_mtok":5,"latency_ms":500`,
		"mid":   `"latency_ms":100`,
	}
	var b strings.Builder
	fmt.Fprintf(&b, "strategy = %q\n", strategy)
	if defaultRuntime != "" {
		fmt.Fprintf(&b, "default_runtime = %q\n", defaultRuntime)
	}
	for _, name := range []string{"zeta", "alpha", "mid"} {
		p := filepath.Join(dir, name+".jsonl")
		body := `{"kz_script":1,"model":"m-` + name + `","capabilities":["text_completion","streaming_text","native_tool_loop","filesystem_read","filesystem_edit","shell"],` + hints[name] + "}\n" +
			`{"type":"assistant_message","text":"I am ` + name + `"}` + "\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "[runtimes.%s]\nkind = \"scripted\"\nscript = %q\n", name, p)
	}
	sb.userConfig(b.String())
}

// TestRuntimeAutoFollowsTheStrategy runs kz -p --runtime auto under every
// strategy with three runtimes: the configured strategy decides, ties go
// to the runtime the config file names first (not the alphabetically
// first), and preferred without a default runtime picks the first
// capable one instead of failing on an empty name.
func TestRuntimeAutoFollowsTheStrategy(t *testing.T) {
	cases := []struct {
		strategy, def, want string
	}{
		{"capability_match", "", "zeta"},
		{"cost_optimized", "", "alpha"},
		{"latency_optimized", "", "mid"},
		{"preferred", "mid", "mid"},
		{"preferred", "", "zeta"},
		{"auto", "alpha", "alpha"},
		{"auto", "", "zeta"},
		{"cost_optimized", "mid", "alpha"},
	}
	for _, c := range cases {
		t.Run(c.strategy+"/"+c.def, func(t *testing.T) {
			sb := newSandbox(t)
			selectionConfig(t, sb, c.strategy, c.def)
			for _, args := range [][]string{{"--runtime", "auto"}, nil} {
				out, errOut, code := sb.kz(append([]string{"-p", "who", "--output-format", "stream-json"}, args...)...)
				if code != 0 {
					t.Fatalf("kz %v: exit %d: %s", args, code, errOut)
				}
				evs := streamEvents(t, out)
				if f := evs[len(evs)-1]; f.Runtime != c.want || f.Output != "I am "+c.want {
					t.Fatalf("kz %v picked %s (%q), want %s", args, f.Runtime, f.Output, c.want)
				}
			}
		})
	}
}

// TestRuntimesJSONSaysWhatEachStrategyPicks checks kz runtimes --json:
// each runtime lists the modes each strategy would pick it for.
func TestRuntimesJSONSaysWhatEachStrategyPicks(t *testing.T) {
	sb := newSandbox(t)
	selectionConfig(t, sb, "auto", "alpha")
	out, errOut, code := sb.kz("runtimes", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		Name       string                            `json:"name"`
		SelectedBy map[engine.Strategy][]engine.Mode `json:"selected_by"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rows) < 3 || rows[0].Name != "zeta" || rows[1].Name != "alpha" || rows[2].Name != "mid" {
		t.Fatalf("rows are not in the config file's order: %s", out)
	}
	want := map[string]map[engine.Strategy]bool{
		"zeta":  {engine.StrategyCapabilityMatch: true},
		"alpha": {engine.StrategyCostOptimized: true, engine.StrategyPreferred: true, engine.StrategyAuto: true},
		"mid":   {engine.StrategyLatencyOptimized: true},
	}
	for _, r := range rows {
		w := want[r.Name]
		for _, st := range engine.Strategies {
			modes := r.SelectedBy[st]
			if w[st] != slices.Contains(modes, engine.ModeFullAutonomous) {
				t.Errorf("%s selected_by[%s] = %v", r.Name, st, modes)
			}
			if w[st] && len(modes) != len(engine.Modes) {
				t.Errorf("%s selected_by[%s] = %v, want every mode", r.Name, st, modes)
			}
		}
	}
}
