//go:build !race

package store

// raceEnabled says the race detector is on, which slows everything.
const raceEnabled = false
