package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/tui"
)

// TestTUINotify: [tui] notify is auto unless set, takes each documented
// value, and a bad one is an error naming the file, line and key.
func TestTUINotify(t *testing.T) {
	t.Parallel()
	p := paths(t)
	c, err := Load(p)
	if err != nil || c.Notify != "auto" {
		t.Fatalf("default: %q %v", c.Notify, err)
	}
	for _, v := range NotifyValues {
		write(t, p.UserConfig, "theme = \"dark\"\n[tui]\nnotify = \""+v+"\"\n")
		c, err := Load(p)
		if err != nil || c.Notify != v {
			t.Errorf("%s: %q %v", v, c.Notify, err)
		}
	}
	write(t, p.UserConfig, "theme = \"dark\"\n\n[tui]\nnotify = \"loud\"\n")
	_, err = Load(p)
	if err == nil || !strings.Contains(err.Error(), "config.toml:4: tui.notify: \"loud\": want auto, bell, osc9 or off") {
		t.Errorf("bad value: %v", err)
	}
}

// TestNotifyValuesAreTheTUIs: every value the configuration accepts is a
// mode the TUI knows, and the other way round.
func TestNotifyValuesAreTheTUIs(t *testing.T) {
	t.Parallel()
	var modes []string
	for _, m := range tui.NotifyModes {
		modes = append(modes, string(m))
	}
	if !slices.Equal(modes, NotifyValues) {
		t.Errorf("config %v, tui %v", NotifyValues, modes)
	}
	for _, v := range NotifyValues {
		if _, err := tui.ParseNotifyMode(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}
