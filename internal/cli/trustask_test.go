package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/app"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/tui"
)

// The TUI asks whether to trust a project file that asks for more than an
// untrusted project may have: a yes trusts it as kz trust does and the
// session opens with the whole file (its allow rules); a no keeps it
// untrusted and the TUI says so; a file that asks for nothing extra is
// never asked about. Not parallel: it replaces the question and changes
// directory.
func TestTrustQuestionBeforeTheTUI(t *testing.T) {
	cases := []struct {
		name      string
		project   string
		answer    bool
		wantAsked bool
		wantTrust bool
	}{
		{"yes", "[permissions]\nallow = [\"Bash(make test)\"]\n", true, true, true},
		{"no", "[permissions]\nallow = [\"Bash(make test)\"]\n", false, true, false},
		{"nothing to enable", "[permissions]\ndeny = [\"Bash(rm:*)\"]\n", true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := newSandbox(t)
			file := filepath.Join(sb.workspace, ".kz", "config.toml")
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, file, c.project)
			var asked []tui.TrustQuestion
			prev := askTrustQuestion
			askTrustQuestion = func(_ context.Context, q tui.TrustQuestion) (bool, error) {
				asked = append(asked, q)
				return c.answer, nil
			}
			t.Cleanup(func() { askTrustQuestion = prev })
			opts := app.Options{Interactive: true, Script: script("hello.jsonl"), Warn: io.Discard}
			a, err := app.Open(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			a, err = askTrust(context.Background(), a, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if (len(asked) > 0) != c.wantAsked {
				t.Fatalf("asked %d times, want asked %v", len(asked), c.wantAsked)
			}
			if c.wantAsked {
				q := asked[0]
				if !strings.HasSuffix(q.File, filepath.Join(".kz", "config.toml")) || strings.Join(q.Enables, ",") != "allow rules" {
					t.Fatalf("question = %+v", q)
				}
			}
			trusted, err := config.IsTrusted(a.Env.Paths.DataDir, a.Env.Paths.ProjectFile)
			if err != nil {
				t.Fatal(err)
			}
			if trusted != c.wantTrust || a.Env.Config.ProjectTrusted != c.wantTrust {
				t.Fatalf("trusted on disk %v, in the session %v; want %v", trusted, a.Env.Config.ProjectTrusted, c.wantTrust)
			}
			allows := strings.Join(a.Env.Config.ProjectPermissions.Allow, ",")
			if c.wantTrust != (allows == "Bash(make test)") {
				t.Fatalf("project allow rules %q with trust %v", allows, c.wantTrust)
			}
			if notice := strings.Contains(a.Welcome, "is not trusted"); notice != (c.wantAsked && !c.wantTrust) {
				t.Fatalf("welcome %q", a.Welcome)
			}
		})
	}
}
