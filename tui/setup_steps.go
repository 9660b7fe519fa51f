package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// update handles a key on the setup screen. esc goes one step back (from
// the first step it closes the screen); every step but the key fields
// takes enter to go on.
func (d *setupDialog) update(msg tea.KeyPressMsg) setupOutcome {
	if msg.String() == "ctrl+c" {
		// The way out from anywhere, as everywhere in kz.
		d.gen++
		return setupOutcome{closed: true}
	}
	switch d.step {
	case stepProvider:
		return d.onProviderKey(msg)
	case stepKey:
		return d.onKeyStepKey(msg)
	case stepModel:
		return d.onModelKey(msg)
	case stepTest, stepConfirm:
		return d.onTestKey(msg)
	}
	return setupOutcome{}
}

// paste puts pasted text in the focused field.
func (d *setupDialog) paste(msg tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	switch d.step {
	case stepKey:
		f := d.field()
		*f, cmd = f.Update(msg)
		d.err = ""
	case stepModel:
		d.filter, cmd = d.filter.Update(msg)
		d.modelCursor = 0
	}
	return cmd
}

// rows is the number of rows of the provider list: the providers, then
// the CLIs.
func (d *setupDialog) rows() int { return len(setupProviders) + len(d.clis) }

func (d *setupDialog) onProviderKey(msg tea.KeyPressMsg) setupOutcome {
	switch msg.String() {
	case "esc", "q":
		return setupOutcome{closed: true}
	case "up", "k", "ctrl+p":
		d.cursor = (d.cursor + d.rows() - 1) % d.rows()
	case "down", "j", "ctrl+n", "tab":
		d.cursor = (d.cursor + 1) % d.rows()
	case "enter":
		d.err = ""
		if d.cursor < len(setupProviders) {
			return d.chooseProvider(setupProviders[d.cursor])
		}
		c := d.clis[d.cursor-len(setupProviders)]
		if !c.LoggedIn {
			d.err = c.Hint
			return setupOutcome{}
		}
		d.choice = SetupChoice{CLI: c.Name}
		d.step = stepConfirm
	}
	return setupOutcome{}
}

// chooseProvider starts the key step of provider p with its defaults: the
// usual variable when it is set (a key already there needs no paste),
// and the provider's endpoint.
func (d *setupDialog) chooseProvider(p providerInfo) setupOutcome {
	if d.choice.Provider != p.id {
		d.key.SetValue("")
		d.env.SetValue("")
		if p.keyEnv != "" && d.svc.EnvSet(p.keyEnv) {
			d.env.SetValue(p.keyEnv)
		}
		d.url.SetValue(p.baseURL)
		d.filter.SetValue("")
		d.models = nil
	}
	d.choice = SetupChoice{Provider: p.id}
	d.step = stepKey
	d.focus = 0
	if p.keyEnv == "" {
		// Ollama has no key: only its address.
		d.focus = 2
	} else if d.env.Value() != "" {
		d.focus = 1
	}
	d.focusField()
	return setupOutcome{}
}

// fields of the key step, in tab order; Ollama shows only the URL.
func (d *setupDialog) fieldOrder() []int {
	if providerOf(d.choice.Provider).keyEnv == "" {
		return []int{2}
	}
	return []int{0, 1, 2}
}

// field is the key step's focused field.
func (d *setupDialog) field() *textinput.Model {
	switch d.focus {
	case 0:
		return &d.key
	case 1:
		return &d.env
	}
	return &d.url
}

// focusField gives the cursor to the focused field alone.
func (d *setupDialog) focusField() {
	for i, f := range []*textinput.Model{&d.key, &d.env, &d.url} {
		if i == d.focus {
			f.Focus()
		} else {
			f.Blur()
		}
	}
}

func (d *setupDialog) onKeyStepKey(msg tea.KeyPressMsg) setupOutcome {
	order := d.fieldOrder()
	at := 0
	for i, f := range order {
		if f == d.focus {
			at = i
		}
	}
	switch msg.String() {
	case "esc":
		d.step, d.err = stepProvider, ""
		return setupOutcome{}
	case "tab", "down":
		d.focus = order[(at+1)%len(order)]
		d.focusField()
		return setupOutcome{}
	case "shift+tab", "up":
		d.focus = order[(at+len(order)-1)%len(order)]
		d.focusField()
		return setupOutcome{}
	case "enter":
		return d.submitKey()
	}
	f := d.field()
	var cmd tea.Cmd
	*f, cmd = f.Update(msg)
	d.err = ""
	return setupOutcome{cmd: cmd}
}

// submitKey checks the key step: a pasted key wins; otherwise the named
// variable must be set; the base URL must be an http(s) URL.
func (d *setupDialog) submitKey() setupOutcome {
	p := providerOf(d.choice.Provider)
	d.choice.Key, d.choice.KeyEnv = "", ""
	if p.keyEnv != "" {
		key, env := strings.TrimSpace(d.key.Value()), strings.TrimSpace(d.env.Value())
		switch {
		case key != "":
			if strings.ContainsAny(key, " \t") {
				d.err = "the key has a space in it: paste the key alone"
				return setupOutcome{}
			}
			d.choice.Key = key
		case env != "":
			if !d.svc.EnvSet(env) {
				d.err = env + " is not set in kz's environment: paste the key instead, or set it and start kz again"
				d.focus = 1
				d.focusField()
				return setupOutcome{}
			}
			d.choice.KeyEnv = env
		default:
			d.err = "paste the key, or name a variable that holds it"
			return setupOutcome{}
		}
	}
	u := strings.TrimRight(strings.TrimSpace(d.url.Value()), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || len(u) <= len("https://") {
		d.err = "the base URL must start with http:// or https://"
		d.focus = 2
		d.focusField()
		return setupOutcome{}
	}
	d.choice.BaseURL = u
	d.err = ""
	d.step = stepModel
	d.filter.Focus()
	return setupOutcome{cmd: d.loadModels()}
}

func (d *setupDialog) loadModels() tea.Cmd {
	d.gen++
	d.loading, d.models = true, nil
	gen, svc, ctx, c := d.gen, d.svc, d.ctx, d.choice
	return func() tea.Msg {
		models, err := svc.Models(ctx, c)
		return setupModelsMsg{gen: gen, models: models, err: err}
	}
}

// shown are the models the filter matches: every word of it, in any
// order, anywhere in the id.
func (d *setupDialog) shown() []string {
	words := strings.Fields(strings.ToLower(d.filter.Value()))
	var out []string
	for _, m := range d.models {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(strings.ToLower(m), w)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func (d *setupDialog) onModelKey(msg tea.KeyPressMsg) setupOutcome {
	shown := d.shown()
	switch msg.String() {
	case "esc":
		d.gen++
		d.step, d.err, d.loading = stepKey, "", false
		d.focusField()
		return setupOutcome{}
	case "up", "ctrl+p":
		d.modelCursor = max(d.modelCursor-1, 0)
		return setupOutcome{}
	case "down", "ctrl+n":
		d.modelCursor = min(d.modelCursor+1, max(len(shown)-1, 0))
		return setupOutcome{}
	case "enter":
		model := strings.TrimSpace(d.filter.Value())
		if d.modelCursor < len(shown) {
			model = shown[d.modelCursor]
		}
		if model == "" || strings.ContainsAny(model, " \t") {
			d.err = "pick a model, or type its id"
			return setupOutcome{}
		}
		d.choice.Model = model
		return setupOutcome{cmd: d.startTest()}
	}
	var cmd tea.Cmd
	d.filter, cmd = d.filter.Update(msg)
	d.modelCursor, d.err = 0, ""
	return setupOutcome{cmd: cmd}
}

// startTest sends the test request.
func (d *setupDialog) startTest() tea.Cmd {
	d.step, d.err, d.tested, d.busy = stepTest, "", false, true
	d.gen++
	gen, svc, ctx, c := d.gen, d.svc, d.ctx, d.choice
	return func() tea.Msg { return setupTestMsg{gen: gen, err: svc.Test(ctx, c)} }
}

// onTestKey: after a passed test (or on the CLI's confirmation) enter
// writes the configuration; after a failed one enter goes back to fix
// the key or URL, m to pick another model, r tries again.
func (d *setupDialog) onTestKey(msg tea.KeyPressMsg) setupOutcome {
	k := msg.String()
	if k == "esc" {
		d.gen++
		d.busy, d.err = false, ""
		if d.step == stepConfirm {
			d.step = stepProvider
		} else {
			d.step = stepModel
		}
		return setupOutcome{}
	}
	if d.busy {
		return setupOutcome{}
	}
	failed := d.step == stepTest && !d.tested
	switch {
	case k == "enter" && failed:
		d.step, d.err = stepKey, ""
		d.focusField()
	case k == "m" && failed:
		d.step, d.err = stepModel, ""
	case k == "r" && failed:
		return setupOutcome{cmd: d.startTest()}
	case k == "enter":
		d.busy, d.err = true, ""
		d.gen++
		gen, svc, ctx, c := d.gen, d.svc, d.ctx, d.choice
		return setupOutcome{cmd: func() tea.Msg {
			res, err := svc.Save(ctx, c)
			return setupSavedMsg{gen: gen, res: res, err: err}
		}}
	}
	return setupOutcome{}
}
