package claudecode

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools/mcp/mcptest"
)

// The test binary doubles as a fake `claude` (clitest.Main), replaying a
// stream-json script.
// It also serves the test MCP server (mcptest) when Claude starts it.
func TestMain(m *testing.M) {
	mcptest.ServeIfChild()
	clitest.Main(m, streamJSON)
}

// streamJSON is what the fake must know of Claude Code's protocol: kz's
// control requests carry request ids of its own, which the CLI's control
// responses name; kz always opens with initialize, which the fake answers
// unless KZ_FAKE_EXPECT_INIT asks the script to see it; the CLI answers an
// interrupt itself and lives on after SIGINT; its Bash tool's children
// stay in its process group.
var streamJSON = clitest.Protocol{
	StreamLine:  `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d;"}},"session_id":"s","parent_tool_use_id":null}`,
	CatchSIGINT: true,
	Learn: func(want, got map[string]any, ids map[string]string) {
		if want["type"] == "control_request" {
			ids[fmt.Sprint(want["request_id"])] = fmt.Sprint(got["request_id"])
			delete(want, "request_id")
		}
	},
	Rewrite: func(msg []byte, ids map[string]string) []byte {
		s := string(msg)
		for rec, real := range ids {
			s = strings.ReplaceAll(s, `"request_id":"`+rec+`"`, `"request_id":"`+real+`"`)
		}
		return []byte(s)
	},
	Intercept: func(got map[string]any, out *bufio.Writer) bool {
		req, _ := got["request"].(map[string]any)
		if got["type"] != "control_request" || req["subtype"] != "initialize" || os.Getenv("KZ_FAKE_EXPECT_INIT") != "" {
			return false
		}
		_, _ = fmt.Fprintf(out, `{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"pid":%d}}}`+"\n", got["request_id"], os.Getpid())
		_ = out.Flush()
		return true
	},
}

// fake is a fake CLI with the runtime that runs it as `claude`.
type fake struct {
	*clitest.Fake
	rt *Runtime
}

// newFake sets up a fake CLI whose runtime also passes env.
func newFake(t testing.TB, lines []clitest.Line, env ...string) *fake {
	t.Helper()
	f := &fake{Fake: clitest.NewFake(t, lines)}
	f.rt = New(Config{Name: "claude", Command: os.Args[0], Workspace: f.WS, KillGrace: 300 * time.Millisecond,
		Env: append(f.Env(), env...)})
	t.Cleanup(func() { _ = f.rt.Close() })
	return f
}

// newHarness is clitest.NewHarness in the workspace of the first runtime.
func newHarness(t testing.TB, runtimes []engine.RuntimeEntry, o clitest.Options) *clitest.Harness {
	t.Helper()
	ws := ""
	switch rt := runtimes[0].Runtime.(type) {
	case *Runtime:
		ws = rt.cfg.Workspace
	case *resultRecorder:
		ws = rt.cfg.Workspace
	}
	return clitest.NewHarness(t, ws, runtimes, o)
}
