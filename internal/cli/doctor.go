package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/internal/headless"
	"github.com/kaizen-code/kz/internal/termsafe"
	"github.com/kaizen-code/kz/store"
)

// cmdDoctor checks kz's database without changing it: SQLite's integrity
// check over every page, damage an earlier kz found, and what it holds.
// With --salvage a damaged database is salvaged (see store.Salvage): what
// can be read is copied into a fresh database and the damaged file is kept
// beside it.
var cmdDoctor = &Command{
	Name:      "doctor",
	UsageLine: "kz doctor [--salvage] [--data-dir DIR]",
	Short: []Usage{{"kz doctor [--salvage]", "check the session database; --salvage copies what\n" +
		"can be read of a damaged one into a fresh one"}},
	Long: `kz doctor checks kz's session database without changing it: SQLite's
integrity check over every page, damage an earlier kz found, and what the
database holds. With --salvage a damaged database is salvaged: every
session, event and file snapshot that can be read is copied into a fresh
database, and the damaged file is kept beside it. --data-dir DIR names
kz's data directory, as for kz itself.

It exits 0 when the database is sound or was salvaged, 1 when it is
damaged (or could not be checked or salvaged), 2 on bad usage.
`,
	Run: runDoctor,
}

func runDoctor(ctx context.Context, inv *Invocation, args []string) error {
	stdout, doctorUsage := inv.Stdout, inv.Command.UsageLine
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "")
	salvage := fs.Bool("salvage", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = fmt.Fprintln(stdout, "usage: "+doctorUsage)
			return nil
		}
		return usagef("doctor: %s (usage: %s)", cliflag.Message(err), doctorUsage)
	}
	if fs.NArg() > 0 {
		return usagef("kz doctor takes no arguments (usage: %s)", doctorUsage)
	}
	if err := requireValues(fs, "data-dir"); err != nil {
		return err
	}
	e, err := app.Load(*dataDir)
	if err != nil {
		return err
	}
	path := e.DatabasePath()
	r, err := store.Check(ctx, path)
	if err != nil {
		return err
	}
	writeCheck(stdout, r)
	switch {
	case r.Missing || r.Healthy():
		if *salvage {
			_, _ = fmt.Fprintln(stdout, "nothing to salvage")
		}
		return nil
	case r.Foreign != nil:
		return exitError{headless.ExitError}
	case !*salvage:
		_, _ = fmt.Fprintln(stdout, "kz doctor --salvage copies every session, event and file snapshot that can be read into a fresh database and keeps the damaged file beside it")
		return exitError{headless.ExitError}
	}
	found := "an earlier kz found it damaged: " + r.EarlierDamage
	if len(r.Problems) > 0 {
		n := fmt.Sprint(len(r.Problems))
		if len(r.Problems) >= store.MaxProblems {
			n += " or more"
		}
		found = fmt.Sprintf("the integrity check found %s %s, first: %s", n, plural(len(r.Problems), "problem", "problems"), r.Problems[0])
	}
	rep, err := store.Salvage(ctx, path, found)
	if err != nil {
		if errors.Is(err, store.ErrDatabaseInUse) {
			return fmt.Errorf("%w: end every other kz, then run kz doctor --salvage again", err)
		}
		return err
	}
	_, _ = fmt.Fprintln(stdout, termsafe.Line(rep.String()))
	return nil
}

// writeCheck prints what Check found, one finding a line.
func writeCheck(w io.Writer, r store.CheckReport) {
	line := func(format string, a ...any) { _, _ = fmt.Fprintln(w, termsafe.Line(fmt.Sprintf(format, a...))) }
	if r.Missing {
		line("database: %s does not exist yet", r.Path)
		return
	}
	size := bytesLabel(r.Size)
	if r.LogSize > 0 {
		size += ", write-ahead log " + bytesLabel(r.LogSize)
	}
	line("database: %s (%s)", r.Path, size)
	switch {
	case r.Foreign != nil:
		line("integrity: not kz's: %v", r.Foreign)
		return
	case len(r.Problems) == 0:
		line("integrity: ok")
	default:
		line("integrity: damaged")
		for _, p := range r.Problems {
			line("  %s", p)
		}
	}
	if r.EarlierDamage != "" {
		line("an earlier kz found damage: %s", r.EarlierDamage)
	}
	if len(r.Problems) == 0 {
		line("sessions: %d, events: %d, file snapshots: %d", r.Sessions, r.Events, r.Snapshots)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func bytesLabel(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
