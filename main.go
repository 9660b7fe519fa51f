// Command kz is a terminal coding assistant: one event stream, one
// permission gate and one session history over many agent runtimes.
//
// Its commands live in internal/cli and the wiring of its packages in
// internal/app; main only hands the command line over.
package main

import (
	"os"

	"github.com/kaizen-code/kz/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// The sandbox wrapper is checked before anything else runs: kz
	// re-executes itself as the Landlock wrapper of sandboxed commands
	// where bubblewrap cannot run.
	if code, ok := cli.SandboxWrapper(os.Args); ok {
		os.Exit(code)
	}
	cli.Version = version
	os.Exit(cli.Main(os.Args[1:]))
}
