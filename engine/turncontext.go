package engine

import (
	"context"
	"sync"
)

// EnvironmentBlind is a Runtime that never shows its model the turn's
// TurnContext.Env: an agent CLI that states the OS, date, directory and
// git status itself, and is handed the memory files only. A runtime that
// does not implement it is taken to show the environment.
type EnvironmentBlind interface {
	IgnoresEnvironment() bool
}

// loadTurnContext loads what a turn's attempts run under: the memory and,
// when Config.Environment is set, the environment, the two side by side
// (they read different things), and the environment only when one of the
// attempts shows it. The result is what loading both one after the other
// gives: neither load sees the other's result.
func (s *Session) loadTurnContext(ctx context.Context, attempts []attempt) TurnContext {
	if s.turnEnv == nil {
		return s.turnContext(ctx, s.workspace)
	}
	var (
		env Environment
		wg  sync.WaitGroup
	)
	if showsEnvironment(attempts) {
		wg.Go(func() { env = s.turnEnv(ctx, s.workspace) })
	}
	var tc TurnContext
	if s.turnContext != nil {
		tc = s.turnContext(ctx, s.workspace)
	}
	wg.Wait()
	tc.Env = env
	return tc
}

// showsEnvironment reports whether a runtime of attempts may show the
// environment to its model.
func showsEnvironment(attempts []attempt) bool {
	for _, a := range attempts {
		if b, ok := a.entry.Runtime.(EnvironmentBlind); !ok || !b.IgnoresEnvironment() {
			return true
		}
	}
	return false
}
