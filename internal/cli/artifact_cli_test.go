package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// kz sessions artifact prints a stored result of the session, escaped, and
// refuses another session's artifact and references that are not one.
func TestSessionsArtifactPrintsTheStoredResult(t *testing.T) {
	sb := newSandbox(t)
	var ids []string
	for range 2 {
		out, errOut, code := sb.kz("-p", "hi", "--script", script("hello.jsonl"), "--output-format", "json")
		var final engine.Event
		if code != 0 || json.Unmarshal([]byte(out), &final) != nil {
			t.Fatalf("exit %d %s", code, errOut)
		}
		ids = append(ids, final.SessionID)
	}
	st, err := store.Open(context.Background(), filepath.Join(sb.data, "kz", "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := st.SaveArtifact(context.Background(), ids[0], "c1", []byte("line one\n\x1b]0;owned\x07 line two"))
	if err == nil {
		_, err = st.SaveArtifact(context.Background(), ids[1], "c1", []byte("the other session"))
	}
	_ = st.Close()
	if err != nil {
		t.Fatal(err)
	}
	n := strings.TrimPrefix(ref, "artifact:")
	for _, arg := range []string{n, ref} {
		out, errOut, code := sb.kz("sessions", "artifact", ids[0], arg)
		if code != 0 || out != "line one\n\\x1b]0;owned\\x07 line two\n" {
			t.Fatalf("kz sessions artifact %s: exit %d %q %q", arg, code, out, errOut)
		}
	}
	if out, errOut, code := sb.kz("sessions", "artifact", ids[1], n); code == 0 || strings.Contains(out, "line one") ||
		!strings.Contains(errOut, "no such artifact in this session") {
		t.Fatalf("another session's artifact: exit %d %q %q", code, out, errOut)
	}
	for _, args := range [][]string{{ids[0]}, {ids[0], "x"}, {ids[0], "0"}, {"", "1"}} {
		if _, errOut, code := sb.kz(append([]string{"sessions", "artifact"}, args...)...); code != 2 || !strings.Contains(errOut, "artifact") {
			t.Errorf("kz sessions artifact %q: exit %d %q", args, code, errOut)
		}
	}
}

// --reasoning takes a level or a budget; anything else is a usage error
// before a session opens.
func TestReasoningFlag(t *testing.T) {
	sb := newSandbox(t)
	for _, bad := range []string{"extreme", "100", ""} {
		if _, errOut, code := sb.kz("-p", "hi", "--script", script("hello.jsonl"), "--reasoning", bad); code != 2 || !strings.Contains(errOut, "reasoning") {
			t.Errorf("--reasoning %q: exit %d %q", bad, code, errOut)
		}
	}
	if _, errOut, code := sb.kz("-p", "hi", "--script", script("hello.jsonl"), "--reasoning", "high"); code != 0 {
		t.Fatalf("--reasoning high: exit %d %q", code, errOut)
	}
}
