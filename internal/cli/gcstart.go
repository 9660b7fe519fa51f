package cli

import (
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// One-shot runs (kz -p) let the heap grow further than Go's default
// before collecting, for their first seconds only.
//
// A kz -p turn allocates most of what it keeps in its first hundred
// milliseconds: the configuration, the store, the redaction rules, the
// checkpoint baseline (an entry per file of the workspace) and the scan
// that compares the workspace with it. With the default GOGC of 100 and
// its 4 MB starting goal, the collector ran five cycles in the first 92 ms
// of a turn in a workspace of 10,000 files, on the same two cores as the
// agent CLI starting beside kz; with startGCPercent, one. The raise ends
// after startGCFor, so a long turn's heap is held to the default after
// that: what the raise can add is bounded by what kz allocates in that
// time (some 5 MB of resident memory in that workspace).
//
// GOGC set in the environment (off included) is the person's choice and
// is left as it is. The TUI keeps the default: it lives long, and its idle
// memory is a figure of its own.
const (
	startGCPercent = 400
	startGCFor     = 2 * time.Second
)

// startGC raises the collector's target once per process; see above.
var startGC sync.Once

// ownProcess is set by Main: kz runs as a process of its own, whose
// collector is its to tune. Tests that call run in-process leave it unset,
// so that their process's collector is never changed behind their back.
var ownProcess atomic.Bool

// raiseGCForStart applies the start's GC percent when GOGC is not set in
// the environment. It returns a channel closed once the previous percent is
// back, or nil when it changed nothing.
func raiseGCForStart(percent int, d time.Duration, lookup func(string) (string, bool)) <-chan struct{} {
	if _, set := lookup("GOGC"); set {
		return nil
	}
	prev := debug.SetGCPercent(percent)
	done := make(chan struct{})
	time.AfterFunc(d, func() {
		debug.SetGCPercent(prev)
		close(done)
	})
	return done
}

// raiseGCForOneShot raises the GC percent for a one-shot run's start,
// once per process, in kz's own process only.
func raiseGCForOneShot() {
	if !ownProcess.Load() {
		return
	}
	startGC.Do(func() { raiseGCForStart(startGCPercent, startGCFor, os.LookupEnv) })
}
