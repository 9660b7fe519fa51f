package codex

import (
	"bufio"
	"encoding/json"
	"fmt"
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
	// The scripts predate kz's config/read before each thread: the fake
	// answers it itself with an empty configuration (no MCP servers of
	// the person's), and the answers the script gives to kz's later
	// requests by their implicit ids (one more now) are renumbered.
	readID := -1
	p.Intercept = func(got map[string]any, out *bufio.Writer) bool {
		if got["method"] != "config/read" {
			return false
		}
		if id, ok := got["id"].(float64); ok && readID < 0 {
			readID = int(id)
		}
		b, _ := json.Marshal(map[string]any{"id": got["id"], "result": map[string]any{"config": map[string]any{}, "origins": map[string]any{}}})
		_, _ = out.Write(append(b, '\n'))
		_ = out.Flush()
		return true
	}
	rewrite := p.Rewrite
	p.Rewrite = func(msg []byte, ids map[string]string) []byte {
		var m map[string]any
		if json.Unmarshal(msg, &m) == nil && m["method"] == nil && readID >= 0 {
			if id, ok := m["id"].(float64); ok && int(id) >= readID {
				if _, learned := ids[fmt.Sprint(m["id"])]; !learned {
					m["id"] = int(id) + 1
					msg, _ = json.Marshal(m)
				}
			}
		}
		return rewrite(msg, ids)
	}
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
