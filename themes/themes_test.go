package themes

import (
	"strings"
	"testing"

	"charm.land/glamour/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEveryThemeHasColourAndNoColorHasNone(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	a := MustResolve("dark", false)
	b := MustResolve("dark", false)
	zero := uint(3)
	a.Markdown.Document.Margin = &zero
	if *b.Markdown.Document.Margin != 0 {
		t.Fatal("changing one theme's markdown style changed another's")
	}
}

// TestEachThemeHasItsOwnMarkdownStyle renders the same markdown with each
// theme's glamour style: every theme looks different, and high contrast
// uses bright white body text.
func TestEachThemeHasItsOwnMarkdownStyle(t *testing.T) {
	t.Parallel()
	src := "# Title\n\nSome text with `code` and a [link](https://example.com).\n"
	seen := map[string]Name{}
	for _, n := range Names {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(MustResolve(string(n), false).Markdown), glamour.WithWordWrap(60))
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Render(src)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := seen[out]; dup {
			t.Errorf("%s renders markdown exactly like %s", n, other)
		}
		seen[out] = n
	}
	hc := MustResolve(string(HighContrast), false).Markdown
	if hc.Document.Color == nil || *hc.Document.Color != "#ffffff" {
		t.Errorf("high-contrast body text is not white")
	}
	if d := MustResolve(string(Dark), false).Markdown; d.Document.Color == nil || *d.Document.Color == "#ffffff" {
		t.Errorf("building high contrast changed the dark style")
	}
}
