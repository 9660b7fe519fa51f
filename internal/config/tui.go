package config

import (
	"fmt"
	"slices"
)

// TUIFile is the [tui] table: how the interactive front end behaves.
type TUIFile struct {
	// Notify is how a permission prompt or a review that waits is
	// announced while the terminal's window is not focused: "auto" (a
	// desktop notification, OSC 9, in terminals known to show one, the
	// bell elsewhere), "bell", "osc9" or "off".
	Notify string `toml:"notify"`
}

// NotifyValues are the values of [tui] notify.
var NotifyValues = []string{"auto", "bell", "osc9", "off"}

// applyTUI merges a [tui] table. Notifications only reach the person's
// own terminal, so a project may set them like the user.
func (cfg *Config) applyTUI(t TUIFile, lines keyLines) error {
	if t.Notify == "" {
		return nil
	}
	if !slices.Contains(NotifyValues, t.Notify) {
		return lines.wrap("tui.notify", fmt.Errorf("%q: want auto, bell, osc9 or off", t.Notify))
	}
	cfg.Notify = t.Notify
	return nil
}
