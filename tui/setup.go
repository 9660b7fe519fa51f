package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/kaizen-code/kz/themes"
)

// SetupService is what the setup screen needs from kz: the agent CLIs on
// this machine with their login state, whether a variable is set, the
// models of a provider, one test request, and writing the user config.
// internal/app implements it over the configuration and the LLM clients;
// the TUI itself never reads a key file, a config file or the network.
type SetupService interface {
	// CLIs checks the agent CLIs on PATH with their own status commands
	// (it may take seconds: it runs in a Cmd).
	CLIs(ctx context.Context) []SetupCLI
	// EnvSet reports whether an environment variable is set and not
	// empty.
	EnvSet(name string) bool
	// Models lists the models to offer for the choice: the catalog's for
	// an API provider, the server's own list for Ollama and OpenRouter.
	Models(ctx context.Context, c SetupChoice) ([]string, error)
	// Test sends one minimal request with the choice through the client
	// the runtime will use; its error says what failed in a sentence.
	Test(ctx context.Context, c SetupChoice) error
	// Save writes the key file (for a pasted key) and the user config,
	// and makes the choice the default runtime.
	Save(ctx context.Context, c SetupChoice) (SetupResult, error)
}

// SetupProvider is an API provider the setup screen offers.
type SetupProvider string

// The providers, in the order the screen lists them.
const (
	SetupAnthropic  SetupProvider = "anthropic"
	SetupOpenAI     SetupProvider = "openai"
	SetupOpenRouter SetupProvider = "openrouter"
	SetupOllama     SetupProvider = "ollama"
	SetupGemini     SetupProvider = "gemini"
)

// SetupChoice is what the person chose on the setup screen: an API
// provider with its key, base URL and model, or an agent CLI.
type SetupChoice struct {
	// Provider is set for an API provider, CLI for an agent CLI.
	Provider SetupProvider
	CLI      string
	// Key is a pasted key. It lives only in this value until Save writes
	// it to a key file; it is never shown, logged or sent to the session.
	Key string
	// KeyEnv names the variable that holds the key instead.
	KeyEnv  string
	BaseURL string
	Model   string
}

// SetupCLI is an agent CLI found on PATH.
type SetupCLI struct {
	Name, Path string
	// LoggedIn says its own status command (or its credentials) says it
	// can run; Hint says what to run otherwise.
	LoggedIn bool
	Hint     string
}

// SetupResult is what Save wrote: the runtime now the default, its model,
// and the files.
type SetupResult struct {
	Runtime, Model      string
	ConfigPath, KeyPath string
}

// SetupDone is what Run returns once the setup screen has written the
// configuration: kz then opens the session again on the new runtime, in
// the same process (the session's id is kept when it already had turns).
type SetupDone struct {
	Result    SetupResult
	SessionID string
}

func (d *SetupDone) Error() string {
	return fmt.Sprintf("setup done: runtime %s written to %s", d.Result.Runtime, d.Result.ConfigPath)
}

// providerInfo is what the screen says about a provider.
type providerInfo struct {
	id    SetupProvider
	label string
	desc  string
	// keyEnv is the provider's usual key variable; "" means it takes no
	// key (Ollama).
	keyEnv string
	// baseURL is the default endpoint shown in the base URL field.
	baseURL string
	// serverModels says the model list comes from the server.
	serverModels bool
}

var setupProviders = []providerInfo{
	{SetupAnthropic, "Anthropic", "Claude models, with kz's own agent", "ANTHROPIC_API_KEY", "https://api.anthropic.com", false},
	{SetupOpenAI, "OpenAI", "GPT models, with kz's own agent", "OPENAI_API_KEY", "https://api.openai.com/v1", false},
	{SetupOpenRouter, "OpenRouter", "many vendors' models through one key", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", true},
	{SetupOllama, "Ollama", "local models, no key", "", "http://" + OllamaAddr, true},
	{SetupGemini, "Gemini", "Google's models, with kz's own agent", "GEMINI_API_KEY", "https://generativelanguage.googleapis.com", false},
}

// ProviderDefaults returns a provider's usual key variable and default
// base URL, which the service writes only when the person changed them.
func ProviderDefaults(p SetupProvider) (keyEnv, baseURL string, ok bool) {
	for _, i := range setupProviders {
		if i.id == p {
			return i.keyEnv, i.baseURL, true
		}
	}
	return "", "", false
}

func providerOf(p SetupProvider) providerInfo {
	for _, i := range setupProviders {
		if i.id == p {
			return i
		}
	}
	return providerInfo{id: p, label: string(p)}
}

// setupStep is one step of the setup screen.
type setupStep string

const (
	stepProvider setupStep = "provider"
	stepKey      setupStep = "key"
	stepModel    setupStep = "model"
	stepTest     setupStep = "test"
	stepConfirm  setupStep = "confirm"
)

// setupDialog is the setup screen: pick a provider or a CLI, give the
// key, pick a model, test the connection, write the config. Every call to
// the service runs in a Cmd and comes back as a setupEvent; gen numbers
// the requests, so that an answer to a request the person has since left
// (esc during a test) is dropped.
type setupDialog struct {
	svc   SetupService
	ctx   context.Context
	theme *themes.Theme
	step  setupStep
	// cursor is the highlighted row of the provider list (providers,
	// then the CLIs).
	cursor int
	clis   []SetupCLI
	// clisLoaded says the CLI check has answered.
	clisLoaded bool
	choice     SetupChoice
	// The key step's fields: the pasted key (masked), the variable's
	// name and the base URL; focus is the field with the cursor.
	key, env, url textinput.Model
	focus         int
	// The model step: the filter, the list and the highlighted row.
	filter      textinput.Model
	models      []string
	modelCursor int
	loading     bool
	// busy is set while a test or a save runs; tested after a test
	// passed.
	busy, tested bool
	// err is the current step's error, shown under it.
	err string
	gen int
}

// setupEvent is an answer of the service, applied to the dialog.
type setupEvent interface {
	apply(d *setupDialog) setupOutcome
}

// setupOutcome is what the dialog asks of the model after a key or an
// answer.
type setupOutcome struct {
	cmd    tea.Cmd
	closed bool
	done   *SetupResult
}

func newSetupDialog(ctx context.Context, svc SetupService, theme *themes.Theme) (*setupDialog, tea.Cmd) {
	d := &setupDialog{svc: svc, ctx: ctx, theme: theme, step: stepProvider}
	d.key = d.newInput("paste it here")
	d.key.EchoMode, d.key.EchoCharacter = textinput.EchoPassword, '•'
	d.env = d.newInput("a variable that holds it, e.g. ANTHROPIC_API_KEY")
	d.url = d.newInput("")
	d.filter = d.newInput("type to filter, or a model id")
	return d, d.loadCLIs()
}

func (d *setupDialog) newInput(placeholder string) textinput.Model {
	in := textinput.New()
	in.Prompt, in.Placeholder = "", placeholder
	st := in.Styles()
	st.Cursor.Blink = false
	st.Focused.Placeholder, st.Blurred.Placeholder = d.theme.Muted, d.theme.Muted
	in.SetStyles(st)
	in.CharLimit = 4096
	return in
}

// setupCLIsMsg answers CLIs.
type setupCLIsMsg struct{ clis []SetupCLI }

func (e setupCLIsMsg) apply(d *setupDialog) setupOutcome {
	d.clis, d.clisLoaded = e.clis, true
	return setupOutcome{}
}

func (d *setupDialog) loadCLIs() tea.Cmd {
	svc, ctx := d.svc, d.ctx
	return func() tea.Msg { return setupCLIsMsg{svc.CLIs(ctx)} }
}

// setupModelsMsg answers Models.
type setupModelsMsg struct {
	gen    int
	models []string
	err    error
}

func (e setupModelsMsg) apply(d *setupDialog) setupOutcome {
	if e.gen != d.gen || d.step != stepModel {
		return setupOutcome{}
	}
	d.loading = false
	if e.err != nil {
		d.err = e.err.Error()
		return setupOutcome{}
	}
	d.models = e.models
	d.modelCursor = 0
	return setupOutcome{}
}

// setupTestMsg answers Test.
type setupTestMsg struct {
	gen int
	err error
}

func (e setupTestMsg) apply(d *setupDialog) setupOutcome {
	if e.gen != d.gen || d.step != stepTest {
		return setupOutcome{}
	}
	d.busy = false
	if e.err != nil {
		d.err = e.err.Error()
		return setupOutcome{}
	}
	d.tested, d.err = true, ""
	return setupOutcome{}
}

// setupSavedMsg answers Save.
type setupSavedMsg struct {
	gen int
	res SetupResult
	err error
}

func (e setupSavedMsg) apply(d *setupDialog) setupOutcome {
	if e.gen != d.gen {
		return setupOutcome{}
	}
	d.busy = false
	if e.err != nil {
		d.err = "could not write the configuration: " + e.err.Error()
		return setupOutcome{}
	}
	res := e.res
	return setupOutcome{done: &res}
}

// openSetup opens the setup screen, unless a turn is running (a
// question could then arrive behind it).
func (m *Model) openSetup() tea.Cmd {
	if m.ext.setup == nil {
		m.tr.notice("the setup screen is not available here", "warn")
		return nil
	}
	if m.status.running {
		m.tr.notice("a turn is running: wait for it or interrupt it (esc), then /setup", "warn")
		m.tr.toBottom()
		return nil
	}
	var cmd tea.Cmd
	m.setup, cmd = newSetupDialog(m.ctx, m.ext.setup, &m.theme)
	m.setup.resize(m.width)
	return cmd
}

// onSetup applies what the setup screen asked for: close it, or, once
// the configuration is written, end the program so that kz opens the
// session again on the new runtime.
func (m *Model) onSetup(o setupOutcome) tea.Cmd {
	switch {
	case o.done != nil:
		m.setupDone = &SetupDone{Result: *o.done, SessionID: m.sess.State().ID}
		m.setup = nil
		return tea.Quit
	case o.closed:
		m.setup = nil
	}
	return o.cmd
}
