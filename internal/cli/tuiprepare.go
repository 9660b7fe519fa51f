package cli

import (
	"bytes"
	"context"
	"strings"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/tui"
)

// runPreparedTUI runs the TUI of a session that is opened after the
// first frame: only the configuration (for the theme) is read before it,
// and the rest of app.Open (the scratch folder of the demo, the store,
// the session) runs while the screen is already up. Messages typed
// meanwhile are queued by the TUI and sent once the session is attached;
// a failed set-up is shown there, and returned when the person quits.
//
// What the set-up warns about is gathered and shown at the top of the
// transcript: written to the terminal while the TUI owns it, it would be
// drawn over.
func runPreparedTUI(ctx context.Context, inv *Invocation, opts app.Options, theme string, x sessionExtras, status string) error {
	env, err := app.Load(opts.DataDir)
	if err != nil {
		return err
	}
	var warn bytes.Buffer
	opts.Warn = &warn
	// a is set by prepare, which tui.Run runs on a goroutine of its own
	// and waits for before it returns: reading a after Run is ordered
	// after the write.
	var a *app.App
	stopGC := func() {}
	prepare := func(ctx context.Context) (tui.Options, error) {
		opened, err := app.OpenIn(ctx, env, opts)
		if err != nil {
			return tui.Options{}, err
		}
		a, stopGC = opened, watchTurnsGC(opened.Session)
		t := tuiOptions(a, theme, x, &warn)
		if w := strings.TrimSpace(warn.String()); w != "" {
			t.Welcome = strings.TrimSpace(w + "\n" + t.Welcome)
		}
		return t, nil
	}
	err = tui.Run(ctx, tui.Options{Theme: firstNonEmpty(theme, env.Config.Theme), Prepare: prepare, Preparing: status})
	if a == nil {
		return err
	}
	defer a.Close()
	defer stopGC()
	return afterTUI(ctx, inv, a, !opts.Demo, err)
}
