package acp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/diff"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
)

// twentyLines is a file whose lines 2 and 19 a write changes: far enough
// apart to make two hunks.
func twentyLines(change2, change19 string) string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		switch {
		case i == 2 && change2 != "":
			b.WriteString(change2 + "\n")
		case i == 19 && change19 != "":
			b.WriteString(change19 + "\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// keepHunk is a person who, on the review of a write, rejects every hunk
// but the one numbered keep; it records the write requests it saw.
type keepHunk struct {
	keep   int
	mu     sync.Mutex
	writes []engine.Event
}

func (k *keepHunk) answer(ev engine.Event) engine.Answer {
	if !ev.Write {
		return engine.Answer{Decision: engine.DecisionAllow}
	}
	k.mu.Lock()
	k.writes = append(k.writes, ev)
	k.mu.Unlock()
	sel := &engine.PatchSelection{Files: []engine.FileSelection{{Path: tools.DiffName(ev.Diff), Hunks: []int{k.keep}}}}
	return engine.Answer{Decision: engine.DecisionAllow, Patch: sel}
}

func (k *keepHunk) seen() []engine.Event {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]engine.Event(nil), k.writes...)
}

// checkTwoHunks checks that a write request offers its two hunks for
// selection.
func checkTwoHunks(t *testing.T, writes []engine.Event) {
	t.Helper()
	if len(writes) != 1 {
		t.Fatalf("asked about %d writes, want 1: %+v", len(writes), writes)
	}
	if n := len(diff.FileHunks(writes[0].Diff)); n != 2 || writes[0].Selection != engine.SelectionContent {
		t.Errorf("%s: %d hunks, selection %q, diff:\n%s", writes[0].Tool, n, writes[0].Selection, writes[0].Diff)
	}
}

// An agent's fs/write_text_file that nobody asked about first opens the
// review; keeping one hunk of two writes exactly that hunk, snapshotted.
func TestDirectWriteLandsKeptHunk(t *testing.T) {
	for _, keep := range []int{0, 1} {
		t.Run(fmt.Sprint("keep", keep), func(t *testing.T) {
			lines := append(handshake("write"),
				clitest.CLI(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/a.txt","content":"`+
					strings.ReplaceAll(twentyLines("TWO", "NINETEEN"), "\n", `\n`)+`"}}`),
				clitest.Host(`{"id":1,"result":null}`),
				clitest.CLI(promptDone))
			f := newFake(t, lines)
			if err := os.WriteFile(filepath.Join(f.WS, "a.txt"), []byte(twentyLines("", "")), 0o644); err != nil {
				t.Fatal(err)
			}
			p := &keepHunk{keep: keep}
			h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: p.answer})
			h.Run(t, context.Background(), "write")
			f.CheckReport()
			checkTwoHunks(t, p.seen())
			want := [2]string{twentyLines("TWO", ""), twentyLines("", "NINETEEN")}[keep]
			if b, _ := os.ReadFile(filepath.Join(f.WS, "a.txt")); string(b) != want {
				t.Errorf("a.txt =\n%s\nwant\n%s", b, want)
			}
			if sn := f.snaps.all(); len(sn) != 1 || string(sn[0].Content) != twentyLines("", "") {
				t.Errorf("snapshots %+v", sn)
			}
		})
	}
}

// A direct write whose kept hunk no longer matches the file (it changed
// since the question) writes nothing and tells the agent why.
func TestDirectWriteStaleSelectionWritesNothing(t *testing.T) {
	lines := append(handshake("write"),
		clitest.CLI(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s-1","path":"<workdir>/a.txt","content":"new\n"}}`),
		clitest.Host(`{"id":1,"error":{"code":-32001,"message":"~no longer match"}}`),
		clitest.CLI(promptDone))
	f := newFake(t, lines)
	path := filepath.Join(f.WS, "a.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: func(ev engine.Event) engine.Answer {
		// The file changes while the person looks at the review.
		_ = os.WriteFile(path, []byte("changed meanwhile\n"), 0o644)
		return engine.Answer{Decision: engine.DecisionAllow, Patch: &engine.PatchSelection{Files: []engine.FileSelection{{Path: "a.txt", Hunks: []int{0}}}}}
	}})
	h.Run(t, context.Background(), "write")
	f.CheckReport()
	if b, _ := os.ReadFile(path); string(b) != "changed meanwhile\n" {
		t.Errorf("a.txt = %q", b)
	}
}

// The real Gemini CLI's write_file over an existing file: the person keeps
// one hunk of two in the review, and exactly that lands on disk (kz
// serves the agent's fs/write_text_file with the kept content).
func TestRealGeminiPartialWriteLandsKeptHunk(t *testing.T) {
	api := newGeminiAPI(t, func(calls int, last string) gstep {
		if calls == 0 {
			return gstep{Call: "write_file", Args: map[string]any{"file_path": "a.txt", "content": twentyLines("TWO", "NINETEEN")}}
		}
		return gstep{Text: "written"}
	})
	rt, ws := realSetup(t, api)
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(twentyLines("", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &keepHunk{keep: 1}
	h := clitest.NewHarness(t, ws, []engine.RuntimeEntry{{Runtime: rt}}, clitest.Options{Gate: clitest.Gate(t, permission.Rules{}), Answer: p.answer})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if final := h.Run(t, ctx, "rewrite a.txt"); final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	checkTwoHunks(t, p.seen())
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != twentyLines("", "NINETEEN") {
		t.Errorf("a.txt =\n%s", b)
	}
}
