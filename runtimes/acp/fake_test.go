package acp

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
)

// The test binary doubles as the fake agent (clitest.Main), replaying a
// JSON-RPC script; the stream action writes message chunks. It is also
// the MCP test server the real agent starts (mcptest.StdioSpec).
func TestMain(m *testing.M) {
	mcptest.ServeIfChild()
	p := clitest.JSONRPC
	p.StreamLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d;"}}}}`
	clitest.Main(m, p)
}

// fake is a fake agent with the runtime that runs it, and the snapshots kz
// saves before each write it serves.
type fake struct {
	*clitest.Fake
	rt    *Runtime
	snaps *memSnapshots
}

// memSnapshots keeps the snapshots kz saves before each write.
type memSnapshots struct {
	mu    sync.Mutex
	snaps []tools.Snapshot
}

func (m *memSnapshots) SaveSnapshot(_ context.Context, s tools.Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snaps = append(m.snaps, s)
	return nil
}

func (m *memSnapshots) all() []tools.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]tools.Snapshot(nil), m.snaps...)
}

// newFake sets up a fake agent; runs after the first use more[k-1] when
// given.
func newFake(t testing.TB, lines []clitest.Line, more ...[]clitest.Line) *fake {
	t.Helper()
	f := &fake{Fake: clitest.NewFake(t, lines, more...), snaps: &memSnapshots{}}
	f.rt = New(Config{Name: "gemini", Command: os.Args[0], Workspace: f.WS, KillGrace: 300 * time.Millisecond, AuthMethod: "gemini-api-key",
		HandshakeTimeout: 10 * time.Second, Snapshots: f.snaps, Env: f.Env()})
	// The agent process outlives its turns; closing the runtime ends it.
	t.Cleanup(func() { _ = f.rt.Close() })
	return f
}
