package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"github.com/charmbracelet/x/ansi"
)

// resize fits the text fields to the screen's width.
func (d *setupDialog) resize(width int) {
	w := max(width-labelWidth-6, 10)
	for _, f := range []*textinput.Model{&d.key, &d.env, &d.url, &d.filter} {
		f.SetWidth(w)
	}
}

// labelWidth is the width of the key step's field labels.
const labelWidth = 14

// view renders the setup screen at width × height: the title with the
// steps, the step's body, its error, and its keys. Text from outside
// (a CLI's path, a server's model ids, an error) is shown with control
// characters escaped.
func (d *setupDialog) view(width, height int) string {
	th := d.theme
	var lines []string
	add := func(s string) { lines = append(lines, strings.Split(s, "\n")...) }
	wrap := func(s string) string { return wrapLine(s, max(width-2, 10)) }
	title := "Set up kz"
	if d.choice.Provider != "" && d.step != stepProvider {
		title += " · " + providerOf(d.choice.Provider).label
	} else if d.choice.CLI != "" && d.step != stepProvider {
		title += " · " + d.choice.CLI
	}
	add(th.Accent.Bold(true).Render(title))
	add(d.stepsLine())
	add("")
	switch d.step {
	case stepProvider:
		d.providerBody(add, wrap)
	case stepKey:
		d.keyBody(add, wrap)
	case stepModel:
		d.modelBody(add, wrap, height-len(lines)-5)
	case stepTest, stepConfirm:
		d.testBody(add, wrap)
	}
	if d.err != "" {
		add("")
		add(th.Error.Render(wrap("✗ " + termText(d.err))))
	}
	help := d.helpLine()
	for len(lines) < height-1 {
		lines = append(lines, "")
	}
	if len(lines) > height-1 {
		lines = lines[:max(height-1, 0)]
	}
	lines = append(lines, th.Muted.Render(ansi.Truncate(help, width, "…")))
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "…")
	}
	return strings.Join(lines, "\n")
}

// stepsLine shows the steps of the path chosen, the current one
// highlighted.
func (d *setupDialog) stepsLine() string {
	type s struct {
		step  setupStep
		label string
	}
	steps := []s{{stepProvider, "provider"}, {stepKey, "key"}, {stepModel, "model"}, {stepTest, "test and save"}}
	switch {
	case d.choice.CLI != "" && d.step != stepProvider:
		steps = []s{{stepProvider, "provider"}, {stepConfirm, "save"}}
	case d.choice.Provider == SetupOllama:
		steps[1].label = "address"
	}
	var parts []string
	for i, st := range steps {
		label := fmt.Sprintf("%d %s", i+1, st.label)
		if st.step == d.step {
			parts = append(parts, d.theme.Selected.Render(" "+label+" "))
		} else {
			parts = append(parts, d.theme.Muted.Render(" "+label+" "))
		}
	}
	return strings.Join(parts, d.theme.Muted.Render("›"))
}

func (d *setupDialog) providerBody(add func(string), wrap func(string) string) {
	th := d.theme
	add(wrap("No runtime is ready yet. Choose how kz reaches a model; you can run /setup again later."))
	add("")
	row := func(i int, name, desc string, usable bool) {
		mark := "  "
		style := th.Text
		if i == d.cursor {
			mark = th.Accent.Render("› ")
			style = th.Accent
		}
		if !usable {
			style = th.Muted
		}
		add(mark + style.Render(fmt.Sprintf("%-12s", name)) + " " + th.Muted.Render(desc))
	}
	add(th.Muted.Render("API providers (kz's own agent)"))
	for i, p := range setupProviders {
		row(i, p.label, p.desc, true)
	}
	add("")
	add(th.Muted.Render("Agent CLIs on this machine"))
	switch {
	case !d.clisLoaded:
		add("  " + th.Muted.Render("checking claude, codex and gemini…"))
	case len(d.clis) == 0:
		add("  " + th.Muted.Render("none on PATH (claude, codex, gemini)"))
	}
	for i, c := range d.clis {
		desc := "logged in · " + termText(c.Path)
		if !c.LoggedIn {
			desc = termText(c.Hint)
		}
		row(len(setupProviders)+i, termText(c.Name), desc, c.LoggedIn)
	}
}

func (d *setupDialog) keyBody(add func(string), wrap func(string) string) {
	th := d.theme
	p := providerOf(d.choice.Provider)
	if p.keyEnv == "" {
		add(wrap("Ollama needs no key. Where does it listen? (ollama serve listens on " + OllamaAddr + ".)"))
	} else {
		add(wrap("Paste your " + p.label + " API key: kz keeps it in a file of its config folder that only you can read (mode 0600), never in the transcript, the history or config.toml. Or name an environment variable that holds it."))
	}
	add("")
	field := func(i int, label string, in string) {
		mark := "  "
		if i == d.focus {
			mark = th.Accent.Render("› ")
		}
		add(mark + th.Text.Render(fmt.Sprintf("%-*s", labelWidth, label)) + in)
	}
	if p.keyEnv != "" {
		field(0, "Key", d.key.View())
		field(1, "or variable", d.env.View())
	}
	field(2, "Base URL", d.url.View())
}

func (d *setupDialog) modelBody(add func(string), wrap func(string) string, room int) {
	th := d.theme
	add(th.Text.Render("Model ") + d.filter.View())
	add("")
	if d.loading {
		add(th.Muted.Render("  asking " + termText(d.choice.BaseURL) + " for its models…"))
		return
	}
	shown := d.shown()
	if len(shown) == 0 && d.err == "" {
		add(th.Muted.Render(wrap("  no listed model matches; enter uses the id as typed")))
		return
	}
	room = max(room, 3)
	start := 0
	if d.modelCursor >= room {
		start = d.modelCursor - room + 1
	}
	for i := start; i < len(shown) && i < start+room; i++ {
		if i == d.modelCursor {
			add(th.Accent.Render("› " + termText(shown[i])))
		} else {
			add("  " + th.Text.Render(termText(shown[i])))
		}
	}
	if n := len(shown) - (start + room); n > 0 {
		add(th.Muted.Render(fmt.Sprintf("  … %d more (type to filter)", n)))
	}
}

func (d *setupDialog) testBody(add func(string), wrap func(string) string) {
	th := d.theme
	if d.step == stepConfirm {
		add(wrap(fmt.Sprintf("Use %s, logged in, as kz's default runtime? kz writes default_runtime = %q to its config.", termText(d.choice.CLI), d.choice.CLI)))
		if d.busy {
			add("")
			add(th.Muted.Render("writing the configuration…"))
		}
		return
	}
	target := termText(d.choice.Model) + " at " + termText(d.choice.BaseURL)
	switch {
	case d.busy && d.tested:
		add(th.Muted.Render("writing the configuration…"))
	case d.busy:
		add(wrap("Testing " + target + " with one short request…"))
	case d.tested:
		add(th.OK.Render(wrap("✓ " + target + " answered.")))
		add("")
		add(wrap("Enter writes it to kz's config as the default runtime and opens the session on it."))
	default:
		add(wrap("The test of " + target + " failed."))
	}
}

// helpLine is the keys of the current step.
func (d *setupDialog) helpLine() string {
	switch d.step {
	case stepProvider:
		return "↑/↓ move · enter choose · esc close"
	case stepKey:
		return "tab next field · enter continue · esc back"
	case stepModel:
		return "type to filter · ↑/↓ move · enter choose · esc back"
	case stepConfirm:
		return "enter save · esc back"
	}
	switch {
	case d.busy:
		return "esc back"
	case d.tested:
		return "enter save and start · esc back"
	}
	return "enter fix the key or URL · m another model · r retry · esc back"
}
