package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/store"
	"github.com/kaizen-code/kz/themes"
	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines. regexp2 (used by glamour's code
// highlighter) keeps a clock goroutine that stops on its own a while after
// the last match; it is not ours to stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// call is one recorded call on the fake session.
type call struct {
	method string
	args   []any
}

// fakeSession records what the TUI asks and answers from fields.
type fakeSession struct {
	mu        sync.Mutex
	calls     []call
	state     engine.State
	runtimes  []engine.RuntimeInfo
	submitErr error
	modeErr   map[engine.Mode]error
	switchErr error
}

func newFake() *fakeSession {
	return &fakeSession{
		state: engine.State{ID: "s1", Runtime: "alpha", Model: "a-1", Mode: engine.ModeFullAutonomous, PermissionMode: engine.PermissionAsk},
		runtimes: []engine.RuntimeInfo{
			{Name: "alpha", Models: []string{"a-1", "a-2"}, Current: true, Capabilities: engine.Capabilities{Set: scripted.FullAgent}},
			{Name: "beta", Models: []string{"b-1"}, Capabilities: engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion)}},
			{Name: "gamma", Unavailable: "gamma not found on PATH"},
		},
		modeErr: map[engine.Mode]error{},
	}
}

func (f *fakeSession) record(method string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{method, args})
}

func (f *fakeSession) Calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func (f *fakeSession) Submit(p string) error { f.record("Submit", p); return f.submitErr }
func (f *fakeSession) Answer(id string, a engine.Answer) error {
	f.record("Answer", id, a)
	return nil
}
func (f *fakeSession) InterruptTurn(id int64, immediate bool) { f.record("Interrupt", immediate, id) }
func (f *fakeSession) SetMode(m engine.Mode) error {
	f.record("SetMode", m)
	return f.modeErr[m]
}
func (f *fakeSession) SwitchRuntime(n, m string) error {
	f.record("SwitchRuntime", n, m)
	return f.switchErr
}
func (f *fakeSession) State() engine.State                  { return f.state }
func (f *fakeSession) Runtimes() []engine.RuntimeInfo       { return f.runtimes }
func (f *fakeSession) Transcript() []engine.TranscriptEntry { return nil }

// testModel builds a quiet model (no timers) of the given size.
func testModel(t testing.TB, sess Session, w, h int) *Model {
	t.Helper()
	m := newModel(context.Background(), sess, nil, themes.MustResolve("dark", false), "")
	m.quiet = true
	// Every reading of the clock is a second later, so no key falls in the
	// permission dialog's grace period unless a test wants it to.
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	m.update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// update applies a message and runs the resulting Cmds synchronously,
// feeding their messages back, like the Bubble Tea loop (without timers).
func (m *Model) update(msg tea.Msg) {
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		_, cmd := m.Update(next)
		queue = append(queue, runCmd(cmd)...)
	}
}

func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	case tea.QuitMsg:
		return nil
	}
	return []tea.Msg{msg}
}

// keyMsg builds a key press from its name as Key.String() spells it.
func keyMsg(s string) tea.KeyPressMsg {
	named := map[string]tea.Key{
		"enter":     {Code: tea.KeyEnter},
		"esc":       {Code: tea.KeyEscape},
		"up":        {Code: tea.KeyUp},
		"down":      {Code: tea.KeyDown},
		"pgup":      {Code: tea.KeyPgUp},
		"pgdown":    {Code: tea.KeyPgDown},
		"tab":       {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
		"space":     {Code: tea.KeySpace, Text: " "},
		"f1":        {Code: tea.KeyF1},
	}
	if k, ok := named[s]; ok {
		return tea.KeyPressMsg(k)
	}
	if rest, ok := strings.CutPrefix(s, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(rest[0]), Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func (m *Model) press(keys ...string) {
	for _, k := range keys {
		m.update(keyMsg(k))
	}
}

func (m *Model) typeText(s string) {
	for _, r := range s {
		m.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (m *Model) feed(evs ...engine.Event) { m.update(eventsMsg{events: evs}) }

// screen is the whole view without colour.
func (m *Model) screen() string { return ansi.Strip(m.View().Content) }

// realSession builds an interactive session over the scripted runtime and
// the real store, and a subscription to it.
func realSession(t *testing.T, script string, extra ...engine.RuntimeEntry) (*engine.Session, *engine.Subscription) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := scripted.Parse("scripted", "test.jsonl", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	id := engine.NewID()
	if err := st.CreateSession(ctx, id, t.TempDir(), "scripted", "m", engine.ModeFullAutonomous); err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter()
	entries := append([]engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}, extra...)
	sess, err := engine.NewSession(engine.Config{ID: id, Journal: w, Runtimes: entries, Runtime: "scripted", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	sub := sess.Subscribe()
	t.Cleanup(func() {
		sub.Close()
		if err := sess.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := w.Close(); err != nil {
			t.Error(err)
		}
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return sess, sub
}

// pumpUntil feeds the subscription's events to the model until the screen
// satisfies cond, or fails after a few seconds.
func pumpUntil(t *testing.T, m *Model, sub *engine.Subscription, what string, cond func(screen string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond(m.screen()) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		evs, err := sub.NextBatch(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for %s: %v\nscreen:\n%s", what, err, m.screen())
		}
		m.update(eventsMsg{events: evs, state: m.sess.State()})
	}
}

func mouseWheel(up bool) tea.MouseWheelMsg {
	b := tea.MouseWheelDown
	if up {
		b = tea.MouseWheelUp
	}
	return tea.MouseWheelMsg{Button: b}
}

// benchMarkdown builds a markdown document of about n bytes with headings,
// paragraphs, lists, code blocks and tables.
func benchMarkdown(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "## Section %d\n\n", i)
		fmt.Fprintf(&b, "This is paragraph %d with **bold**, `code` and a [link](https://example.com/%d). It goes on for a while so that wrapping matters at every width we test.\n\n", i, i)
		fmt.Fprintf(&b, "- item one of %d\n- item two with `inline`\n- item three\n\n", i)
		fmt.Fprintf(&b, "```go\nfunc f%d() int {\n\n\treturn %d\n}\n```\n\n", i, i)
		if i%3 == 0 {
			fmt.Fprintf(&b, "| a | b |\n|---|---|\n| %d | %d |\n\n", i, i*2)
		}
	}
	return b.String()
}

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func themeForBench() themes.Theme { return themes.MustResolve("dark", false) }
