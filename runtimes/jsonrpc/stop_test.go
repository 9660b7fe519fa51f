package jsonrpc

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/sandbox/sandboxtest"
)

// Stopping a CLI in its own sandbox waits for its shutdown, not for the
// kernel to take back its memory (clitest.CheckStoppedBeforeReaped).
func TestStopDoesNotWaitForTheKernel(t *testing.T) {
	// Checked last, once the sandbox is closed too.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	ws := t.TempDir()
	sb := sandboxtest.New(t, ws)
	c, err := Start(agentcli.NewConfiner(sb), nil, "perl", clitest.HeavyCLI, ws, []string{"PATH=/usr/bin:/bin"},
		"KZ_JSONRPC_TEST", nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-c.In:
		if m.Method != "ready" {
			t.Fatalf("the CLI said %+v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the CLI never said it was ready: %s", c.Stderr.String())
	}
	if !c.tree.PIDNamespace {
		t.Fatal("the CLI is not in a sandbox of its own: the test proves nothing")
	}
	marked := c.tree.Marked()
	cli := clitest.HeavyPID(t, marked)
	c.Stop(10 * time.Second)
	clitest.CheckStoppedBeforeReaped(t, cli, ws, c.Stderr.String(), marked)
}
