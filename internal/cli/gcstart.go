package cli

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// kz tunes Go's collector in two moments where it collected far more
// often than the memory it kept called for.
//
// The start of a one-shot run (kz -p). A turn allocates most of what it
// keeps in its first hundred milliseconds: the configuration, the store,
// the redaction rules, the checkpoint baseline (an entry per file of the
// workspace) and the scan that compares the workspace with it. With the
// default GOGC of 100 and its 4 MB starting goal, the collector ran five
// cycles in the first 92 ms of a turn in a workspace of 10,000 files, on
// the same two cores as the agent CLI starting beside kz; at
// startGCPercent, one. The raise ends after startGCFor, so what it can
// add is bounded by what kz allocates in that time (some 5 MB of resident
// memory in that workspace).
//
// A turn, from the person's message to its final result, when the heap
// it starts on is small (turnGCMaxLive). A streamed answer makes garbage
// at every frame (markdown rendered, frames composed, events decoded),
// and the collector took a twentieth of the TUI's CPU streaming 200 KB.
// At turnGCPercent the heap may grow to three times what is live instead
// of two, for that turn only: a session whose live heap is already large
// (a long one resumed) keeps the default, so its peak stays where it was.
//
// GOGC set in the environment (off included) is the person's choice and
// is left as it is. Both raises are made only in kz's own process (Main):
// tests that call run in-process leave their process's collector alone.
const (
	startGCPercent = 400
	startGCFor     = 2 * time.Second
	turnGCPercent  = 200
	turnGCMaxLive  = 24 << 20
)

// ownProcess is set by Main: kz runs as a process of its own, whose
// collector is its to tune.
var ownProcess atomic.Bool

// processGC is the collector's policy of kz's own process: nil where Main
// did not start kz (a test running it in-process) and where GOGC is set.
var processGC = sync.OnceValue(func() *gcPolicy {
	if !ownProcess.Load() {
		return nil
	}
	return newGCPolicy(os.LookupEnv, debug.SetGCPercent)
})

// raiseGCForOneShot raises the GC percent for a one-shot run's start, in
// kz's own process only.
func raiseGCForOneShot() {
	startGC.Do(func() { processGC().raiseForStart(startGCFor) })
}

// startGC makes the start's raise once per process.
var startGC sync.Once

// watchTurnsGC holds the turn's raise over the turns of s in kz's own
// process; stop ends it.
func watchTurnsGC(s *engine.Session) (stop func()) {
	return processGC().watchTurns(s, liveHeap)
}

// gcPolicy sets the collector's percent from the raises in force: the
// highest of them, or the percent it found when none is.
type gcPolicy struct {
	mu  sync.Mutex
	set func(int) int
	// base is the percent before any raise.
	base int
	// start and turns say the start's raise is in force and how many
	// turns hold the turn's raise.
	start bool
	turns int
}

// newGCPolicy returns a policy that sets the percent with set, or nil
// when GOGC is in the environment.
func newGCPolicy(lookup func(string) (string, bool), set func(int) int) *gcPolicy {
	if _, ok := lookup("GOGC"); ok {
		return nil
	}
	p := &gcPolicy{set: set}
	// SetGCPercent returns the percent it replaces: reading the base
	// this way puts it straight back.
	p.base = set(100)
	set(p.base)
	return p
}

// apply sets the percent the raises in force call for. p.mu is held.
func (p *gcPolicy) apply() {
	pct := p.base
	if p.turns > 0 {
		pct = max(pct, turnGCPercent)
	}
	if p.start {
		pct = max(pct, startGCPercent)
	}
	p.set(pct)
}

// raiseForStart raises the percent for d and returns a channel closed when
// the raise has ended. A nil policy does nothing and returns nil.
func (p *gcPolicy) raiseForStart(d time.Duration) <-chan struct{} {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.start = true
	p.apply()
	p.mu.Unlock()
	done := make(chan struct{})
	time.AfterFunc(d, func() {
		p.mu.Lock()
		p.start = false
		p.apply()
		p.mu.Unlock()
		close(done)
	})
	return done
}

// holdTurn raises the percent for a turn whose heap starts at live bytes
// and returns what ends the raise, or nil when the heap is too large.
func (p *gcPolicy) holdTurn(live uint64) (release func()) {
	if p == nil || live > turnGCMaxLive {
		return nil
	}
	p.mu.Lock()
	p.turns++
	p.apply()
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.turns--
			p.apply()
			p.mu.Unlock()
		})
	}
}

// watchTurns holds the turn's raise over each turn of s: from its user
// message to its final result. stop ends the watch and any raise it holds;
// it returns once the watching goroutine has. A nil policy watches
// nothing.
func (p *gcPolicy) watchTurns(s *engine.Session, live func() uint64) (stop func()) {
	if p == nil || s == nil {
		return func() {}
	}
	sub := s.SubscribeTo(engine.EventUserMessage, engine.EventFinalResult)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var release func()
		defer func() {
			if release != nil {
				release()
			}
		}()
		for {
			// The watch ends when it is stopped (ctx) or the session
			// closes (engine.ErrClosed): either way, nothing more comes.
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			switch ev.Type {
			case engine.EventUserMessage:
				if release == nil {
					release = p.holdTurn(live())
				}
			case engine.EventFinalResult:
				if release != nil {
					release()
					release = nil
				}
			}
		}
	}()
	return func() {
		cancel()
		sub.Close()
		<-done
	}
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
