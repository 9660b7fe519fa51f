// Package mcptest is a small real MCP server, built with the official MCP
// Go SDK, for kz's tests: a test binary serves it over stdio when started
// with ServeEnv set (its TestMain calls ServeIfChild), and over streamable
// HTTP on 127.0.0.1 in the test's own process (NewHTTP). Every call the
// server answers is appended to a log file, so a test can prove that a
// denied call never reached it.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizen-code/kz/tools/mcp"
)

// ServeEnv, set to "stdio" in a test binary's environment, makes
// ServeIfChild serve the MCP server on stdin and stdout; LogEnv names the
// file every answered call is appended to.
const (
	ServeEnv = "KZ_MCPTEST_SERVE"
	LogEnv   = "KZ_MCPTEST_LOG"
)

// The server's tools: echo (read-only by its annotations), note (writes,
// by its annotations), big (returns n bytes), crash (the stdio server
// exits mid-call) and fail (the tool reports an error).
const (
	ToolEcho  = "echo"
	ToolNote  = "note"
	ToolBig   = "big"
	ToolCrash = "crash"
	ToolFail  = "fail"
)

// NewServer builds the server. logPath, when not empty, receives one line
// per call: the tool's name and its arguments.
func NewServer(logPath string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "kz-mcptest", Version: "1"}, nil)
	var mu sync.Mutex
	logCall := func(req *sdk.CallToolRequest) {
		if logPath == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return
		}
		_, _ = fmt.Fprintf(f, "%s %s\n", req.Params.Name, req.Params.Arguments)
		_ = f.Close()
	}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	no := false
	s.AddTool(&sdk.Tool{Name: ToolEcho, Description: "Echoes its text.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			logCall(req)
			var in struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return text("echo: " + in.Text), nil
		})
	s.AddTool(&sdk.Tool{Name: ToolNote, Description: "Saves a note.", Annotations: &sdk.ToolAnnotations{DestructiveHint: &no},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			logCall(req)
			return text("noted"), nil
		})
	s.AddTool(&sdk.Tool{Name: ToolBig, Description: "Returns n bytes of text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			logCall(req)
			var in struct{ N int }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return text(strings.Repeat("x", in.N)), nil
		})
	s.AddTool(&sdk.Tool{Name: ToolCrash, Description: "Exits the server.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			logCall(req)
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: ToolFail, Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			logCall(req)
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the fail tool failed"}}}, nil
		})
	return s
}

// ServeIfChild serves the server on stdio and exits when the process was
// started as the stdio server (ServeEnv=stdio); otherwise it returns. A
// test package that starts the server calls it first in TestMain.
func ServeIfChild() {
	if os.Getenv(ServeEnv) != "stdio" {
		return
	}
	err := NewServer(os.Getenv(LogEnv)).Run(context.Background(), &sdk.StdioTransport{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StdioSpec is a spec that starts this test binary as the stdio server,
// logging its calls to logPath.
func StdioSpec(t testing.TB, name, logPath string) mcp.Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.Spec{Name: name, Transport: mcp.Stdio, Command: exe, Args: []string{"-test.run=^$"},
		Env:            map[string]string{ServeEnv: "stdio", LogEnv: logPath},
		StartupTimeout: mcp.DefaultStartupTimeout, ToolTimeout: mcp.DefaultToolTimeout}
}

// NewHTTP serves the server over streamable HTTP on 127.0.0.1 and returns
// its URL; it stops with the test. check, when not nil, vets every
// request's headers (e.g. the Authorization a spec configures) and
// refuses it with 401 when it returns false.
func NewHTTP(t testing.TB, logPath string, check func(http.Header) bool) string {
	t.Helper()
	srv := NewServer(logPath)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil && !check(r.Header) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// A client that dies without ending its session (an agent CLI
		// killed at the end of a turn) leaves the session's reader
		// running: it is closed with the server.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		ts.Close()
	})
	return ts.URL
}

// Calls reads the log of answered calls, one "tool args" line each.
func Calls(t testing.TB, logPath string) []string {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
