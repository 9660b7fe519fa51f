package acp

import (
	"log/slog"

	"github.com/kaizen-code/kz/runtimes/agentcli"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
)

// The CLI connection is the shared JSON-RPC driver; these names keep the
// package's code short.
type (
	conn     = jsonrpc.Conn
	wire     = jsonrpc.Message
	rpcError = jsonrpc.Error
)

// markerVar names the variable that marks every process descended from one
// CLI, so that children which left its process group are killed too.
const markerVar = "KZ_ACP_RUN"

func startConn(confiner agentcli.Confiner, writable []string, command string, args []string, dir string, env []string, log *slog.Logger) (*conn, error) {
	return jsonrpc.StartConfined(confiner, writable, command, args, dir, env, markerVar, log)
}

func truncate(s string, n int) string { return jsonrpc.Truncate(s, n) }
