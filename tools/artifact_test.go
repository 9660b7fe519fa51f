package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// sessionArtifacts stores and reads artifacts per session, as the store
// does.
type sessionArtifacts struct {
	mu   sync.Mutex
	rows []struct{ session, content string }
}

func (s *sessionArtifacts) SaveArtifact(_ context.Context, sessionID, _ string, content []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, struct{ session, content string }{sessionID, string(content)})
	return fmt.Sprintf("artifact:%d", len(s.rows)), nil
}

func (s *sessionArtifacts) ReadArtifact(_ context.Context, sessionID, ref string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int
	if _, err := fmt.Sscanf(ref, "artifact:%d", &n); err != nil || n < 1 || n > len(s.rows) || s.rows[n-1].session != sessionID {
		return nil, fmt.Errorf("no such artifact in this session")
	}
	return []byte(s.rows[n-1].content), nil
}

func TestPageLines(t *testing.T) {
	t.Parallel()
	content := []byte("a\nb\nc\nd\ne")
	cases := []struct {
		offset, limit int
		want          string
	}{
		{0, 0, "a\nb\nc\nd\ne\n[artifact:1: lines 1-5 of 5 shown; end of the artifact]"},
		{2, 2, "b\nc\n[artifact:1: lines 2-3 of 5 shown; continue with offset 4]"},
		{5, 10, "e\n[artifact:1: lines 5-5 of 5 shown; end of the artifact]"},
		{6, 1, "[artifact:1 has 5 lines; offset 6 is past its end]"},
	}
	for _, c := range cases {
		if got := PageLines("artifact:1", content, c.offset, c.limit); got != c.want {
			t.Errorf("PageLines(%d, %d) = %q, want %q", c.offset, c.limit, got, c.want)
		}
	}
	// A page never exceeds the output cap, however long the lines, and
	// the cut falls on a line (or, for one huge line, a rune) boundary.
	long := strings.Repeat(strings.Repeat("é", 700)+"\n", 100)
	page := PageLines("artifact:2", []byte(long), 1, 0)
	if len(page) > MaxArtifactOutput+200 || !strings.Contains(page, "continue with offset") {
		t.Fatalf("page of %d bytes: %q", len(page), page[len(page)-80:])
	}
	huge := PageLines("artifact:3", []byte(strings.Repeat("é", MaxArtifactOutput)), 1, 0)
	if len(huge) > MaxArtifactOutput+200 || !strings.Contains(huge, "…\n[artifact:3: lines 1-1 of 1 shown; end") || !json.Valid([]byte(fmt.Sprintf("%q", huge))) {
		t.Fatalf("one huge line: %d bytes, tail %q", len(huge), huge[len(huge)-60:])
	}
	if got := PageLines("artifact:4", []byte("ok \xff\n"), 1, 0); !strings.HasPrefix(got, "ok \uFFFD\n") {
		t.Fatalf("invalid UTF-8 not repaired: %q", got)
	}
}

func TestArtifactRef(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`"artifact:12"`: "artifact:12", `"12"`: "artifact:12", `12`: "artifact:12", `" artifact:7 "`: "artifact:7"} {
		if got, err := ArtifactRef(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("ArtifactRef(%s) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{`"x"`, `0`, `-3`, `"artifact:"`, `true`, `{}`, `1.5`} {
		if got, err := ArtifactRef(json.RawMessage(bad)); err == nil {
			t.Errorf("ArtifactRef(%s) = %q", bad, got)
		}
	}
}

// An over-limit result is stored, the model is told its reference, and
// read_artifact reads it back page by page through the real gate in every
// mode, with nobody to answer (an ask would be a denial).
func TestReadArtifactReadsBackAStoredResultInEveryMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ReadArtifact{})
	arts := &sessionArtifacts{}
	f.env.Artifacts = arts
	var err error
	f.ex, err = NewExecutor(ExecutorConfig{Registry: f.ex.Registry(), Env: f.env, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 1; i <= 30000; i++ {
		fmt.Fprintf(&b, "line %05d\n", i)
	}
	f.write(t, "big.txt", b.String())
	res := f.call(t, "read_file", map[string]any{"path": "big.txt", "limit": 30000})
	if !strings.Contains(res.Output, "stored as artifact artifact:1") {
		t.Fatalf("no artifact: %.300s", res.Output)
	}
	home := t.TempDir()
	g, err := permission.New(permission.Options{Home: home, Headless: true,
		ConfigDir: filepath.Join(home, ".config", "kz"), DataDir: filepath.Join(home, ".local", "share", "kz")})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []engine.Mode{engine.ModeFullAutonomous, engine.ModeAnalysisOnly, engine.ModePatchProposal} {
		p := &gatePermitter{g: g, base: engine.GateQuery{SessionID: "sess1", Runtime: "native", Mode: mode,
			PermissionMode: engine.PermissionAsk, Workspace: f.ws.Dir()}}
		out := f.ex.Execute(context.Background(), p, f.rec, []ToolCall{{ID: "ra-" + string(mode), Name: "read_artifact",
			Input: json.RawMessage(`{"artifact":"artifact:1","offset":29999,"limit":5}`)}})
		if out[0].IsError || out[0].Output != " 29999\tline 29999\n 30000\tline 30000\n[artifact:1: lines 29999-30000 of 30000 shown; end of the artifact]" {
			t.Fatalf("%s: %+v", mode, out[0])
		}
		if v, n := p.last(); n != 1 || v.Decision != engine.DecisionAllow {
			t.Fatalf("%s: gate said %+v", mode, v)
		}
	}
	// A page of the default size stays under the result limit: it is
	// never stored as an artifact again.
	res = f.call(t, "read_artifact", map[string]any{"artifact": 1})
	if res.IsError || strings.Contains(res.Output, "stored as artifact") || !strings.Contains(res.Output, "continue with offset") ||
		len(res.Output) > DefaultMaxResult {
		t.Fatalf("first page: %.200s … %s", res.Output, res.Output[max(0, len(res.Output)-120):])
	}
	// Another session's artifact and a bad reference are errors, not
	// content.
	if _, err := arts.SaveArtifact(context.Background(), "other", "c", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if res := f.call(t, "read_artifact", map[string]any{"artifact": "artifact:2"}); !res.IsError || strings.Contains(res.Output, "secret") {
		t.Fatalf("read another session's artifact: %+v", res)
	}
	if res := f.call(t, "read_artifact", map[string]any{"artifact": "../etc"}); !res.IsError {
		t.Fatalf("bad reference accepted: %+v", res)
	}
}

func TestReadArtifactWithoutAStoreIsAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ReadArtifact{})
	if res := f.call(t, "read_artifact", map[string]any{"artifact": 1}); !res.IsError || !strings.Contains(res.Output, "keeps no artifacts") {
		t.Fatalf("%+v", res)
	}
}
