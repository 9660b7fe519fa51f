package claudecode

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/sandbox/sandboxtest"
)

// Claude Code's polite shutdown (stdin closed) and its stop by SIGINT
// wait for the CLI to end its own work, not for the kernel to take back
// its memory (clitest.CheckStoppedBeforeReaped).
func TestShutdownDoesNotWaitForTheKernel(t *testing.T) {
	sandboxtest.RequireBubblewrap(t)
	for _, how := range []string{"shutdown", "kill"} {
		t.Run(how, func(t *testing.T) {
			ws := t.TempDir()
			sb := sandboxtest.New(t, ws)
			// SIGINT ends the fake's read of stdin as a closed stdin
			// does: perl's default action would kill it, so it is
			// turned into the end of input.
			args := clitest.HeavyCLI
			if how == "kill" {
				args = []string{args[0], `$SIG{INT} = sub { close STDIN };` + args[1]}
			}
			p, err := start(agentcli.NewConfiner(sb), "perl", args, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + ws},
				slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case m := <-p.msgs:
				if m.Type != "ready" {
					t.Fatalf("the CLI said %+v", m)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the CLI never said it was ready: %s", p.stderr.String())
			}
			marked := p.tree.Marked()
			cli := clitest.HeavyPID(t, marked)
			if how == "kill" {
				p.kill(10 * time.Second)
			} else {
				p.shutdown(10 * time.Second)
			}
			clitest.CheckStoppedBeforeReaped(t, cli, ws, p.stderr.String(), marked)
		})
	}
}
