//go:build !race

package thirdparty

// raceEnabled says the race detector is on, which slows the exhaustive
// sweeps about tenfold.
const raceEnabled = false
