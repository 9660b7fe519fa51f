package cliflag

import (
	"flag"
	"io"
	"testing"
	"time"
)

func TestMessagesNameFlagsAsTheHelpDoes(t *testing.T) {
	var d time.Duration
	var n int
	var usd float64
	var s string
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "90"}, `--timeout: "90" is not a duration; use a unit, e.g. 90s or 10m`},
		{[]string{"--timeout", "soon"}, `--timeout: "soon" is not a duration; use a unit, e.g. 90s, 10m or 1h30m`},
		{[]string{"--max-cycles", "2.5"}, `--max-cycles: "2.5" is not a whole number`},
		{[]string{"--budget-usd", "NaN"}, `--budget-usd: "NaN" is not an amount of US dollars (e.g. 0.50; 0: no limit)`},
		{[]string{"--budget-usd", "-Inf"}, `--budget-usd: "-Inf" is not an amount of US dollars (e.g. 0.50; 0: no limit)`},
		{[]string{"--nope"}, "unknown flag --nope"},
		{[]string{"-p"}, "-p needs a value"},
	} {
		fs := flag.NewFlagSet("kz", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(Duration{&d}, "timeout", "")
		fs.Var(Int{&n}, "max-cycles", "")
		fs.Var(USD{&usd}, "budget-usd", "")
		fs.StringVar(&s, "p", "", "")
		err := fs.Parse(c.args)
		if err == nil || Message(err) != c.want {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	fs := flag.NewFlagSet("kz", flag.ContinueOnError)
	fs.StringVar(&s, "mode", "", "")
	fs.StringVar(&s, "model", "", "")
	if err := fs.Parse([]string{"--mode", ""}); err != nil {
		t.Fatal(err)
	}
	if got := Empty(fs, "mode", "model"); got != "mode" {
		t.Fatalf("Empty = %q", got)
	}
}
