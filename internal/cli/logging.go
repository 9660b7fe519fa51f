package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/internal/logging"
)

// installLog sends every log of the session to the log file in kz's state
// directory, at debug level with --debug and else at the level KZ_LOG
// names (info by default). Nothing is logged to the terminal: the TUI
// owns it, and kz -p's stderr is for its own messages. What goes wrong
// here is a warning on warn, before the TUI starts, and logs are then
// dropped.
func installLog(debug bool, warn io.Writer) *logging.Log {
	level := logging.DefaultLevel
	if v := os.Getenv(logging.EnvVar); v != "" {
		l, err := logging.ParseLevel(v)
		if err != nil {
			_, _ = fmt.Fprintf(warn, "kz: warning: %v; logging at %s\n", err, level)
		} else {
			level = l
		}
	}
	if debug {
		level = logging.LevelDebug
	}
	dir, err := config.StateDir()
	if err != nil {
		dir = ""
	}
	lg, err := logging.Install(dir, level)
	if err != nil {
		_, _ = fmt.Fprintf(warn, "kz: warning: logs are dropped: %v\n", err)
	}
	return lg
}
