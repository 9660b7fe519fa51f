// Package engine is kz's contract: what every runtime, front end and
// store agrees on, and the session that holds them to it.
//
// It owns the events a turn produces and their wire names (event.go), the
// capabilities a runtime declares and the requirements of each mode
// (capability.go), the Runtime contract with its permission requests, the
// Gate and the Patcher a session calls out to (runtime.go), the Session
// that runs turns, switches runtime and mode, asks the gate and the person,
// enforces the limits and journals every event through one path
// (session.go, turn.go, permission.go, patchmode.go, compact.go), the
// runtime-neutral transcript that primes a runtime joining a session
// (transcript.go), runtime selection and the failover chain (selector.go),
// and the event bus that fans events out to subscribers (bus.go).
//
// engine imports no other kz package: runtimes, tools, patch, the store
// and the front ends all import it, and it reaches them only through the
// interfaces it declares (Runtime, Gate, Patcher, Journal). A concrete
// runtime, gate, store or terminal interface in here would tie every
// other package to it. Wiring them together is internal/app's work; a
// test in internal/app enforces the rule with go list.
package engine
