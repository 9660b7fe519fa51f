package themes

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEveryThemeHasColourAndNoColorHasNone(t *testing.T) {
	for _, n := range Names {
		th, err := Resolve(string(n), false)
		if err != nil {
			t.Fatal(err)
		}
		if th.Name != n || th.NoColor {
			t.Fatalf("%s: resolved as %s (no colour %t)", n, th.Name, th.NoColor)
		}
		for name, out := range map[string]string{"error": th.Error.Render("x"), "added": th.Added.Render("x"), "accent": th.Accent.Render("x")} {
			if !strings.Contains(out, "38;") {
				t.Errorf("%s: %s style has no foreground colour: %q", n, name, out)
			}
		}
		if m := th.Markdown.Document.Margin; m == nil || *m != 0 {
			t.Errorf("%s: markdown document margin is not zero", n)
		}
		nc, err := Resolve(string(n), true)
		if err != nil {
			t.Fatal(err)
		}
		if !nc.NoColor {
			t.Fatalf("%s: NO_COLOR not honoured", n)
		}
		for _, out := range []string{nc.Error.Render("x"), nc.Added.Render("x"), nc.Accent.Render("x"), nc.Selected.Render("x"), nc.Status.Render("x")} {
			if strings.Contains(out, "38;") || strings.Contains(out, "48;") {
				t.Errorf("%s NO_COLOR: colour in %q", n, out)
			}
		}
		if nc.Markdown.Document.Color != nil || nc.Markdown.Code.Color != nil {
			t.Errorf("%s NO_COLOR: markdown style has colours", n)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Name{"": Dark, "dark": Dark, "Light": Light, " high-contrast ": HighContrast} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("solarized"); err == nil || !strings.Contains(err.Error(), "dark, light or high-contrast") {
		t.Fatalf("unknown theme: %v", err)
	}
	if _, err := Resolve("nope", true); err == nil {
		t.Fatal("Resolve accepted an unknown theme")
	}
}

func TestThemesDoNotShareGlamourState(t *testing.T) {
	a := MustResolve("dark", false)
	b := MustResolve("dark", false)
	zero := uint(3)
	a.Markdown.Document.Margin = &zero
	if *b.Markdown.Document.Margin != 0 {
		t.Fatal("changing one theme's markdown style changed another's")
	}
}
