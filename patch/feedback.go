package patch

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultMaxRetries is how many times a model is asked to fix a proposal
// that failed to apply or verify.
const DefaultMaxRetries = 2

// RetryPolicy bounds the feedback loop with the model.
type RetryPolicy struct {
	// MaxRetries is the number of re-proposals allowed after the first
	// attempt; a negative value disables retries, 0 means the default.
	MaxRetries int
}

// Allow reports whether another attempt is allowed after `failed` failed
// attempts (1 after the first failure).
func (r RetryPolicy) Allow(failed int) bool {
	max := r.MaxRetries
	switch {
	case max < 0:
		return false
	case max == 0:
		max = DefaultMaxRetries
	}
	return failed <= max
}

// maxFeedbackBytes bounds the feedback text sent back to the model.
const maxFeedbackBytes = 16 << 10

// FormatFeedback renders a failed validation for the model: only the
// failed edits, each with its search text and the nearest lines the file
// really has, so the model can copy them. Other errors render as their
// message.
func FormatFeedback(err error) string {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return fmt.Sprintf("Your proposal could not be used: %v\nPropose the change again.", err)
	}
	var b strings.Builder
	b.WriteString("Your proposal was NOT applied; no file was changed. Fix these problems and propose the whole change again:\n")
	for _, p := range ve.Problems {
		b.WriteString("\n- ")
		if p.Path != "" {
			b.WriteString(displayPath(p.Path))
			if p.Edit >= 0 {
				fmt.Fprintf(&b, ", edit %d", p.Edit+1)
			}
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
		b.WriteString("\n")
		if p.Search != "" {
			b.WriteString("  Your search lines were:\n")
			writeIndented(&b, strings.TrimSuffix(p.Search, "\n"), 20)
		}
		if len(p.Nearest) > 0 {
			b.WriteString("  The nearest lines in the file are (line number | text):\n")
			for _, n := range p.Nearest {
				fmt.Fprintf(&b, "    %d | %s\n", n.Line, n.Text)
			}
		}
		if b.Len() > maxFeedbackBytes {
			b.WriteString("\n(more problems omitted)\n")
			break
		}
	}
	if errors.Is(err, ErrStale) {
		b.WriteString("\nSome files changed since you read them: read them again before proposing.\n")
	}
	return b.String()
}

// FormatVerificationFailure renders a failed verification command for the
// model, keeping the end of the output (where errors usually are).
func FormatVerificationFailure(command string, exitCode int, output string) string {
	const keep = 8 << 10
	if len(output) > keep {
		output = "…" + output[len(output)-keep:]
	}
	return fmt.Sprintf("The change was applied, but the verification command failed.\nCommand: %s\nExit code: %d\nOutput:\n%s\nPropose a fix as a new change.", command, exitCode, output)
}

func writeIndented(b *strings.Builder, text string, maxLines int) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if i == maxLines {
			fmt.Fprintf(b, "    … (%d more lines)\n", len(lines)-maxLines)
			break
		}
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteString("\n")
	}
}
