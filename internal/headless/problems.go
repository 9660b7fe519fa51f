package headless

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/kaizen-code/kz/engine"
)

// maxProblemLines bounds how many problems of one rejected proposal are
// printed; the rest are counted. maxLineRunes bounds each line.
const (
	maxProblemLines = 10
	maxLineRunes    = 300
)

// rememberPatch records the paths a proposal touches.
func (p *printer) rememberPatch(ev engine.Event) {
	if ev.PatchID == "" || len(ev.Files) == 0 {
		return
	}
	if p.patchFiles == nil {
		p.patchFiles = map[string][]string{}
	}
	paths := make([]string, 0, len(ev.Files))
	for _, f := range ev.Files {
		paths = append(paths, f.Path)
	}
	p.patchFiles[ev.PatchID] = paths
}

// files names the paths of a proposal, or "" when it is unknown (a
// proposal rejected before it was parsed has no patch id).
func (p *printer) files(patchID string) string {
	return strings.Join(p.patchFiles[patchID], ", ")
}

// rejection renders a patch_rejected event as one line per problem. The
// event's text is the feedback written for the model: for a proposal that
// did not validate or apply it lists each problem on a line of its own that
// starts with "- " and names the file and the edit (the search lines and
// the file's nearest lines follow, indented, and are left out here).
// Other feedback (a declined proposal, an unusable one) is its first line,
// prefixed by the proposal's files when they are known.
func (p *printer) rejection(ev engine.Event) string {
	head := "kz: patch rejected"
	if ev.Reason != "" {
		head += " (" + ev.Reason + ")"
	}
	var problems []string
	for _, l := range strings.Split(ev.Text, "\n") {
		if rest, ok := strings.CutPrefix(l, "- "); ok && strings.TrimSpace(rest) != "" {
			problems = append(problems, rest)
		}
	}
	if len(problems) == 0 {
		msg := firstLine(ev.Text)
		if msg == "" {
			msg = "no reason given"
		}
		if files := p.files(ev.PatchID); files != "" {
			msg = files + ": " + msg
		}
		problems = []string{msg}
	}
	var b strings.Builder
	for i, pr := range problems {
		if i == maxProblemLines {
			fmt.Fprintf(&b, "%s: … and %d more problems\n", head, len(problems)-i)
			break
		}
		fmt.Fprintf(&b, "%s: %s\n", head, oneLine(pr))
	}
	return b.String()
}

// failedVerify renders a proposal's verification command that exited
// non-zero: the change was applied, but it does not do what it claims.
func (p *printer) failedVerify(ev engine.Event) string {
	s := "kz: verification failed"
	if files := p.files(ev.PatchID); files != "" {
		s += " after applying " + files
	}
	s += fmt.Sprintf(": `%s` exited with %d", oneLine(ev.Command), *ev.ExitCode)
	if last := lastLine(ev.Output); last != "" {
		s += ": " + last
	}
	return oneLine(s) + "\n"
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// lastLine is the last non-empty line of a command's output, where the
// reason for a failure usually is.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// oneLine keeps a message on one terminal line: control characters become
// spaces and the text is cut to maxLineRunes.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > maxLineRunes {
		s = string(r[:maxLineRunes-1]) + "…"
	}
	return s
}
