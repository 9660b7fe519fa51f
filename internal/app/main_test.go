package app

import (
	"os"
	"testing"

	"github.com/kaizen-code/kz/tools/sandbox"
)

// TestMain probes the machine's sandbox before any test runs: the probe
// is taken once per process, and tests that empty PATH (firstRunHome)
// would otherwise leave every later test of the package without
// bubblewrap.
func TestMain(m *testing.M) {
	sandbox.Probe()
	os.Exit(m.Run())
}
