package tui

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/scripted"
)

// pickerInfos are runtimes as kz registers them: each with its one-line
// description, one of them unavailable.
func pickerInfos() []engine.RuntimeInfo {
	full := engine.Capabilities{Set: scripted.FullAgent}
	return []engine.RuntimeInfo{
		{Name: "claude", Description: "Claude Code CLI 2.0.14", Models: []string{"sonnet"}, Capabilities: full, Current: true},
		{Name: "api", Description: "native · anthropic claude-sonnet-4-5", Models: []string{"claude-sonnet-4-5", "claude-haiku-4-5"}, Capabilities: full},
		{Name: "codex", Description: "Codex CLI", Models: []string{"gpt-5-codex"}, Unavailable: "codex not found on PATH"},
		{Name: "draft", Description: "completion, text only · openai gpt-4o", Models: []string{"gpt-4o"},
			Capabilities: engine.Capabilities{Set: engine.NewCapSet(engine.CapTextCompletion)}},
	}
}

// TestGoldenRuntimePicker: each runtime with its description; the
// unavailable one dimmed with its reason, the one that cannot serve the
// mode saying so.
func TestGoldenRuntimePicker(t *testing.T) {
	th := themeForBench()
	st := engine.State{Runtime: "claude", Model: "sonnet", Mode: engine.ModeFullAutonomous}
	for _, w := range goldenWidths {
		p := newRuntimePicker(pickerInfos(), st)
		v := p.view(&th, w, 12)
		golden(t, "runtime_picker", w, v)
		// Colour is stripped from golden files: the dimming is checked
		// here.
		if dim := th.Muted.Render("  codex  Codex CLI · unavailable: codex not found on PATH"); !strings.Contains(v, dim) {
			t.Errorf("the unavailable runtime is not dimmed:\n%q", v)
		}
		p.cursor = 2
		golden(t, "runtime_picker_unavailable", w, p.view(&th, w, 12))
	}
}

// TestRuntimePickerShowsDescriptions checks the rows' text, as a person
// reads it.
func TestRuntimePickerShowsDescriptions(t *testing.T) {
	f := newFake()
	f.runtimes = pickerInfos()
	f.state.Runtime, f.state.Model = "claude", "sonnet"
	m := testModel(t, f, 140, 24)
	m.press("ctrl+r")
	s := m.screen()
	for _, want := range []string{
		"● claude  Claude Code CLI 2.0.14 · model sonnet",
		"api  native · anthropic claude-sonnet-4-5 · models claude-sonnet-4-5, claude-haiku-4-5",
		"codex  Codex CLI · unavailable: codex not found on PATH",
		"draft  completion, text only · openai gpt-4o · model gpt-4o · cannot serve full-autonomous",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the picker lacks %q:\n%s", want, s)
		}
	}
}

// TestModelPickerFilterKeepsTypedText: what is typed filters the list
// (letters that are keys elsewhere included), survives a new list of the
// runtimes, and a name the list does not have is chosen as typed.
func TestModelPickerFilterKeepsTypedText(t *testing.T) {
	newModels := func() *fakeSession {
		f := newFake()
		f.runtimes[0].Models = []string{"claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"}
		f.state.Model = "claude-sonnet-4-5"
		return f
	}
	t.Run("filter then choose", func(t *testing.T) {
		f := newModels()
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		m.typeText("haiku")
		s := m.screen()
		if !strings.Contains(s, "model › haiku") || !strings.Contains(s, "claude-haiku-4-5") || strings.Contains(s, "claude-opus-4-1") {
			t.Fatalf("the filter did not narrow the list:\n%s", s)
		}
		m.press("enter")
		if c := f.Calls(); len(c) != 1 || c[0].args[0] != "alpha" || c[0].args[1] != "claude-haiku-4-5" {
			t.Fatalf("calls = %+v", c)
		}
	})
	t.Run("letters are text, not keys", func(t *testing.T) {
		f := newModels()
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		// q closes and j/k move in the runtime picker; here they are
		// part of a model name.
		m.typeText("qjk")
		if m.picker == nil || m.picker.filter.Value() != "qjk" {
			t.Fatalf("typed text lost: picker %v", m.picker)
		}
	})
	t.Run("a new list keeps the typed text", func(t *testing.T) {
		f := newModels()
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		m.typeText("opus")
		// The runtimes arrive again (the key pressed twice, or a refresh).
		m.update(runtimesMsg{kind: pickModel, infos: f.Runtimes(), state: f.State()})
		if m.picker.filter.Value() != "opus" || !strings.Contains(m.screen(), "model › opus") {
			t.Fatalf("the new list dropped the typed text:\n%s", m.screen())
		}
		m.typeText("-4")
		m.press("enter")
		if c := f.Calls(); len(c) != 1 || c[0].args[1] != "claude-opus-4-1" {
			t.Fatalf("calls = %+v", c)
		}
	})
	t.Run("a name not in the list is accepted as typed", func(t *testing.T) {
		f := newModels()
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		m.typeText("claude-sonnet-5-preview")
		if s := m.screen(); !strings.Contains(s, "claude-sonnet-5-preview  use this name") {
			t.Fatalf("the typed name is not offered:\n%s", s)
		}
		m.press("enter")
		if c := f.Calls(); len(c) != 1 || c[0].args[0] != "alpha" || c[0].args[1] != "claude-sonnet-5-preview" {
			t.Fatalf("calls = %+v", c)
		}
	})
	t.Run("a prefix of listed names offers both", func(t *testing.T) {
		f := newModels()
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		m.typeText("claude")
		// Every listed model matches; the typed text comes last.
		p := m.picker
		if len(p.items) != 4 || !p.items[3].typed || p.cursor != 0 {
			t.Fatalf("items %+v cursor %d", p.items, p.cursor)
		}
		m.press("up", "up", "down", "down", "down", "down", "enter")
		if c := f.Calls(); len(c) != 1 || c[0].args[1] != "claude" {
			t.Fatalf("calls = %+v", c)
		}
	})
	t.Run("a refused name keeps the picker and the text", func(t *testing.T) {
		f := newModels()
		f.switchErr = errReplay("switch runtime: alpha has no model \"nope\"")
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		m.typeText("nope")
		m.press("enter")
		if m.picker == nil || m.picker.filter.Value() != "nope" || !strings.Contains(m.screen(), `has no model "nope"`) {
			t.Fatalf("the refusal lost the picker or the text:\n%s", m.screen())
		}
		m.press("backspace")
		if strings.Contains(m.screen(), `has no model "nope"`) {
			t.Error("the refusal stays after the text changed")
		}
	})
	t.Run("exactly a listed name offers no duplicate", func(t *testing.T) {
		f := newModels()
		m := testModel(t, f, 100, 24)
		m.press("ctrl+l")
		m.typeText("claude-opus-4-1")
		if p := m.picker; len(p.items) != 1 || p.items[0].typed {
			t.Fatalf("items %+v", p.items)
		}
	})
}

// errReplay is an error with a fixed text.
type errReplay string

func (e errReplay) Error() string { return string(e) }
