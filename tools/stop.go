package tools

import "context"

// A tool call can be stopped two ways. Its context ending is the polite
// stop: the bash tool then sends its command's process tree SIGTERM and
// kills it only after a grace period, so that a command can clean up. The
// hard stop, carried beside the context by WithHardStop, cuts that grace
// short: the tree is killed at once. A runtime that distinguishes the two
// (the person's first and second interrupt) runs its tools under a context
// it cancels on the first and passes the turn's own context as the hard
// stop.

// hardStopKey is the context key of the hard-stop channel.
type hardStopKey struct{}

// WithHardStop returns ctx carrying hard as the hard stop of the tool calls
// run under it: when hard ends, a command being stopped (or still running)
// is killed without a grace period.
func WithHardStop(ctx, hard context.Context) context.Context {
	return context.WithValue(ctx, hardStopKey{}, hard.Done())
}

// hardStop returns the hard-stop channel of ctx, or nil (which never
// closes) when it carries none.
func hardStop(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(hardStopKey{}).(<-chan struct{})
	return ch
}
