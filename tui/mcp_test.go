package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// fakeMCP lists fixed servers and counts the lists.
type fakeMCP struct{ calls int }

func (f *fakeMCP) MCPServers(context.Context) []MCPServer {
	f.calls++
	return []MCPServer{
		{Name: "github", Transport: "stdio", State: "ready", Tools: []string{"mcp__github__search_issues (read-only)", "mcp__github__create_issue"}},
		{Name: "docs", Transport: "http", State: "failed", Error: "DOCS_TOKEN is not set"},
		{Name: "proj", Transport: "stdio", State: "not trusted", Error: "the project's configuration is not trusted: run kz trust to start it"},
	}
}

func TestMCPCommandListsServers(t *testing.T) {
	for _, w := range goldenWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			m := testModel(t, newFake(), w, 24)
			m.command("/mcp")
			if s := m.screen(); !strings.Contains(s, "no MCP servers are configured") {
				t.Fatalf("without a lister:\n%s", s)
			}
			m = testModel(t, newFake(), w, 24)
			f := &fakeMCP{}
			m.ext.mcp = f
			m.command("/mcp")
			if f.calls != 1 {
				t.Fatalf("%d lists", f.calls)
			}
			golden(t, "mcp_list", w, m.View().Content)
		})
	}
}
