package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/x/ansi"
)

// runtimesWidth is the width every line of kz runtimes fits in, so that
// the list reads in an 80-column terminal and in a narrow split.
const runtimesWidth = 80

// runtimeLine is one runtime of the short listing.
type runtimeLine struct {
	Name  string
	Ready bool
	// Why is the reason it cannot run, or what it runs when it can.
	Why string
}

// maxNameColumn bounds the name column: a configured runtime with a very
// long name is cut rather than pushing every reason off the line.
const maxNameColumn = 20

// writeRuntimeLines writes the short listing: a header, then one line a
// runtime with its name, "yes" or "no" and one reason, each line at most
// width columns wide. A reason that does not fit is cut with an
// ellipsis; --verbose and --json give it whole.
func writeRuntimeLines(w io.Writer, lines []runtimeLine, width int) error {
	nameCol := len("RUNTIME")
	for _, l := range lines {
		nameCol = max(nameCol, ansi.StringWidth(l.Name))
	}
	nameCol = min(nameCol, maxNameColumn)
	var b strings.Builder
	row := func(name, state, why string) {
		line := fmt.Sprintf("%-*s  %-5s  %s", nameCol, ansi.Truncate(name, nameCol, "…"), state, firstLine(why))
		b.WriteString(ansi.Truncate(strings.TrimRight(line, " "), width, "…"))
		b.WriteByte('\n')
	}
	row("RUNTIME", "READY", "WHY")
	for _, l := range lines {
		state := "no"
		if l.Ready {
			state = "yes"
		}
		row(l.Name, state, l.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readyReason is the reason column of a runtime that can run: its
// version (a CLI) and its default model.
func readyReason(version string, models []string) string {
	var parts []string
	if version != "" {
		parts = append(parts, "version "+version)
	}
	if len(models) > 0 {
		parts = append(parts, "model "+models[0])
	}
	return strings.Join(parts, ", ")
}

// firstLine keeps the first line of a reason, with its spacing squeezed:
// an error that quotes a CLI's output must not break the listing.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.Join(strings.Fields(s), " ")
}

// fitLine cuts a line to width, unless verbose asks for all of it.
func fitLine(s string, width int, verbose bool) string {
	if verbose {
		return s
	}
	return ansi.Truncate(firstLine(s), width, "…")
}

// writeVerboseRuntimes writes the full table of kz runtimes --verbose:
// availability with the whole reason, models and capabilities.
func writeVerboseRuntimes(w io.Writer, rows []runtimeRow) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "RUNTIME\tAVAILABLE\tMODELS\tCAPABILITIES")
	for _, r := range rows {
		avail := "yes"
		if r.Version != "" {
			avail = "yes (" + r.Version + ")"
		}
		if !r.Available {
			avail = "no: " + r.Why
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, avail, strings.Join(r.Models, ", "), r.Capabilities.Set)
	}
	return tw.Flush()
}
