package sandbox

import "context"

// Prewarm searches the writable directories (the workspace and the
// configured ones) in the background, as the first workspace-write
// command under bubblewrap would: that search (an lstat of every file,
// 17-30 ms for 10,000 files) is then done, or under way, when the first
// command comes. kz calls it when a session opens on an agent CLI, whose
// process is such a command: in the TUI it then starts without the search
// at the first turn, which comes after the person typed. A command that
// comes first waits for the search as it would for its own. Close cancels
// it and waits for it; a second call does nothing.
//
// Under Policy.NoWatch (a one-shot kz, which starts its command at once)
// it only reads what an earlier kz saved of the search (searchsave_linux.go:
// decoding it takes 3 to 9 ms for 1,000 directories, while kz opens its
// store), and leaves the search itself to the first command: a search of
// unwatched directories is checked again by the command's own (an lstat
// of each directory), so searching ahead would only add that check.
func (s *Sandbox) Prewarm() {
	if s.status.Kind != KindBubblewrap {
		return
	}
	s.warmMu.Lock()
	defer s.warmMu.Unlock()
	if s.warmDone != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.warmCancel, s.warmDone = cancel, done
	go func() {
		defer close(done)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		for _, r := range append([]string{s.pol.Workspace}, s.pol.Writable...) {
			if s.trees[r] != nil {
				// A command searched it already (the prewarm came
				// second to the lock): nothing is left to warm.
				continue
			}
			t := s.newTree(r)
			s.trees[r] = t
			if s.pol.NoWatch {
				continue
			}
			// A search that fails (a tree too large) fails again for
			// the command that needs it, which reports it.
			if _, err := t.search(ctx, maxDirs); err != nil {
				return
			}
		}
	}()
}

// stopPrewarm cancels a Prewarm's search and waits for it.
func (s *Sandbox) stopPrewarm() {
	s.warmMu.Lock()
	cancel, done := s.warmCancel, s.warmDone
	if done == nil {
		// None will start after Close.
		s.warmDone = make(chan struct{})
		close(s.warmDone)
	}
	s.warmMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
