package cli

// How kz runs as a process: the signals that end a run, what a closed
// output does, the prompt read from standard input, and how an outcome
// becomes an exit code.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/headless"
	"github.com/kaizen-code/kz/internal/proc"
)

// Main runs kz as a process on its arguments (os.Args[1:]) and returns
// its exit code. It runs the command under a context that an interrupt, a
// termination or a hangup (the terminal closed) cancels. Cancelling ends
// the turn as interrupted and lets every deferred clean-up run, instead of
// the process dying where it stands.
//
// A closed output pipe (kz -p … | head -2) does the same. A write to a
// closed pipe raises SIGPIPE, which would kill kz on the spot; once SIGPIPE
// is asked for with signal.Notify, the write fails with EPIPE instead and
// outputWriter cancels the context with errOutputClosed. The signal is
// asked for, not ignored, because an ignored SIGPIPE would be inherited by
// every command kz starts. Its channel is never read: a signal that finds
// it full is dropped, which is all that is wanted.
func Main(args []string) int {
	// Before any child starts: nothing kz's parent handed down reaches
	// the commands kz runs (see proc.CloseInheritedOnExec).
	if err := proc.CloseInheritedOnExec(); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "kz: %v\n", err)
		return 1
	}
	ownProcess.Store(true)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	return run(ctx, args, &outputWriter{w: os.Stdout, closed: cancel}, os.Stderr)
}

// errOutputClosed is the cause of a context cancelled because stdout's
// reader went away.
var errOutputClosed = errors.New("the output was closed")

// outputWriter is stdout; a write that finds the pipe closed cancels the
// run with errOutputClosed.
type outputWriter struct {
	w      io.Writer
	closed context.CancelCauseFunc
}

func (o *outputWriter) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		o.closed(errOutputClosed)
	}
	return n, err
}

// stdin is where kz -p - reads its prompt; tests replace it. Nothing else
// reads it on the headless path.
var stdin io.Reader = os.Stdin

// maxStdinPrompt bounds a prompt read from standard input.
const maxStdinPrompt = 16 << 20

// readPrompt reads the whole of r as a prompt (kz -p -). An interrupt
// while it waits on a terminal ends kz: the read cannot be cancelled, so
// it is left to the goroutine, which ends with the process a moment later.
func readPrompt(ctx context.Context, r io.Reader) (string, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, maxStdinPrompt+1))
		ch <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("-p -: stopped while reading the prompt from standard input: %w", context.Cause(ctx))
	case res := <-ch:
		switch {
		case res.err != nil:
			return "", fmt.Errorf("-p -: read standard input: %w", res.err)
		case len(res.b) > maxStdinPrompt:
			return "", usagef("-p -: the prompt on standard input is longer than %d MiB", maxStdinPrompt>>20)
		case strings.TrimSpace(string(res.b)) == "":
			return "", usagef("-p -: standard input held no prompt")
		}
		return string(res.b), nil
	}
}

// usageError marks bad flags or arguments: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// exitError carries an exit code decided by a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run runs the command args name and maps its outcome to kz's exit code,
// saying on stderr what went wrong.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	var aue *app.UsageError
	if errors.As(err, &aue) {
		// A wrong call found while wiring kz (the scripted runtime
		// without --script) is a usage error like any other.
		err = usageError{aue.Msg}
	}
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		_, _ = fmt.Fprintf(stderr, "kz: %s (see kz --help)\n", ue.msg)
		return headless.ExitUsage
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, syscall.EPIPE):
		// A write found the output closed (kz sessions list | head -1):
		// what the reader wanted was written, so kz ends quietly and
		// well, as a program killed by SIGPIPE would have without a
		// word. A turn of kz -p that the closed output interrupted still
		// exits 3 (exitError, above), and so does a command the closing
		// cancelled before it wrote (the interrupted case below).
		return 0
	case interrupted(ctx, err) != nil:
		_, _ = fmt.Fprintf(stderr, "kz: %s\n", oneLine(interrupted(ctx, err).Error()))
		return headless.ExitStopped
	default:
		_, _ = fmt.Fprintf(stderr, "kz: %s\n", oneLine(err.Error()))
		var nr *app.NoRuntimeError
		if errors.As(err, &nr) {
			_, _ = fmt.Fprintln(stderr, app.NoRuntimeHint)
		}
		return headless.ExitError
	}
}

// interruptedError is an error caused by the run's context being
// cancelled (Ctrl-C, SIGTERM, a hangup, a closed output) outside a turn:
// opening the database, reading the prompt, claiming the session. kz then
// exits 3 like an interrupted turn, saying only that it was interrupted;
// the wrapped error (a migration's "context canceled") is how it showed,
// not what went wrong.
type interruptedError struct {
	cause error
	err   error
}

func (e *interruptedError) Error() string {
	if e.cause == nil || e.cause == context.Canceled {
		return "interrupted"
	}
	return "interrupted: " + e.cause.Error()
}

func (e *interruptedError) Unwrap() error { return e.err }

// interrupted returns err as an *interruptedError when the run's context
// was cancelled and err comes from that cancellation, and nil otherwise.
// Both are checked: a context.Canceled of some inner context while ctx is
// alive is a failure, not an interrupt.
func interrupted(ctx context.Context, err error) *interruptedError {
	var ie *interruptedError
	if errors.As(err, &ie) {
		return ie
	}
	if err == nil || ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if !errors.Is(err, context.Canceled) && !errors.Is(err, cause) {
		return nil
	}
	return &interruptedError{cause: cause, err: err}
}

// oneLine makes an error message one line, for a terminal.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }
