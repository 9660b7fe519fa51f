package codex

import (
	"os"
	"testing"
	"time"

	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
)

// The test binary doubles as the fake CLI (clitest.Main), replaying a
// JSON-RPC script; the stream action writes agent-message deltas.
func TestMain(m *testing.M) {
	mcptest.ServeIfChild()
	p := clitest.JSONRPC
	p.StreamLine = `{"method":"item/agentMessage/delta","params":{"threadId":"th-1","turnId":"tu-1","itemId":"m","delta":"%d;"}}`
	clitest.Main(m, p)
}

// fake is a fake CLI with the runtime that runs it as codex.
type fake struct {
	*clitest.Fake
	rt *Runtime
}

// newFake sets up a fake CLI; runs after the first use more[k-1] when given.
func newFake(t testing.TB, lines []clitest.Line, more ...[]clitest.Line) *fake {
	t.Helper()
	f := &fake{Fake: clitest.NewFake(t, lines, more...)}
	// The recorded samples were taken with the read-only sandbox; the
	// real-CLI tests run the default.
	f.rt = New(Config{Name: "codex", Command: os.Args[0], Workspace: f.WS, KillGrace: 300 * time.Millisecond, Sandbox: SandboxReadOnly,
		HandshakeTimeout: 10 * time.Second, Env: f.Env()})
	// Finished turns' processes stop in the background until Close.
	t.Cleanup(func() { _ = f.rt.Close() })
	return f
}
