package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedProposal is the patch-proposal JSON of the design documents: each
// file's change is a unified diff in files[].patch and the verification
// commands are under tests.
const seedProposal = `{
  "summary": "Greet by name and add a note",
  "files": [
    {"path": "greet.go", "operation": "modify", "patch": "--- a/greet.go\n+++ b/greet.go\n@@ -1,3 +1,3 @@\n package greet\n \n-func Hello() string { return \"hi\" }\n+func Hello() string { return \"hello\" }\n"},
    {"path": "NOTES.md", "operation": "add", "patch": "--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1,2 @@\n+# Notes\n+greeting changed\n"},
    {"path": "old.txt", "operation": "delete", "patch": "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"}
  ],
  "tests": ["go test ./...", "go vet ./..."],
  "risks": ["callers comparing the greeting"]
}`

// TestSeedProposalAppliesEndToEnd parses the seed's JSON, validates it
// against a real workspace and applies it: the diffs become edits, the new
// file and the deletion happen, and tests become verification commands.
func TestSeedProposalAppliesEndToEnd(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{
		"greet.go": "package greet\n\nfunc Hello() string { return \"hi\" }\n",
		"old.txt":  "bye\n",
	})
	p, err := Parse(seedProposal)
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != FormatJSON || len(p.Files) != 3 {
		t.Fatalf("parsed %q with %d files", p.Format, len(p.Files))
	}
	if strings.Join(p.Verification, "|") != "go test ./...|go vet ./..." {
		t.Fatalf("verification = %q, want the tests commands", p.Verification)
	}
	a, _ := newTestApplier(t, work)
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if _, err := a.Apply(context.Background(), plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
	want := map[string]string{
		"greet.go": "package greet\n\nfunc Hello() string { return \"hello\" }\n",
		"NOTES.md": "# Notes\ngreeting changed\n",
	}
	for name, body := range want {
		got, err := os.ReadFile(filepath.Join(work, name))
		if err != nil || string(got) != body {
			t.Errorf("%s = %q, %v; want %q", name, got, err, body)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old.txt still exists: %v", err)
	}
}

// TestProposalPatchSpellings covers the shapes a files[].patch takes:
// hunks without file headers, a new file with a/ b/ names, an envelope,
// a missing path taken from the diff, and a rename.
func TestProposalPatchSpellings(t *testing.T) {
	cases := map[string]struct {
		json      string
		path, op  string
		newPath   string
		edits     int
		content   string
		verifyLen int
	}{
		"hunks only": {
			json: `{"files":[{"path":"a.txt","patch":"@@ -1,2 +1,2 @@\n x\n-y\n+Y\n"}],"tests":"make check"}`,
			path: "a.txt", op: "modify", edits: 1, verifyLen: 1,
		},
		"new file with a/ b/ names": {
			json: `{"files":[{"path":"n.txt","operation":"add","patch":"--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"}]}`,
			path: "n.txt", op: "add", content: "one\ntwo\n",
		},
		"new file hunks only": {
			json: `{"files":[{"path":"n.txt","operation":"add","patch":"@@ -0,0 +1 @@\n+one\n"}]}`,
			path: "n.txt", op: "add", content: "one\n",
		},
		"envelope": {
			json: `{"files":[{"path":"a.txt","patch":"*** Begin Patch\n*** Update File: a.txt\n-y\n+Y\n*** End Patch\n"}],"verification":["v"],"tests":["t"]}`,
			path: "a.txt", op: "modify", edits: 1, verifyLen: 2,
		},
		"path from the diff": {
			json: `{"files":[{"patch":"--- a/d/e.txt\n+++ b/d/e.txt\n@@ -1 +1 @@\n-y\n+Y\n"}]}`,
			path: "d/e.txt", op: "modify", edits: 1,
		},
		"rename": {
			json: `{"files":[{"path":"a.txt","operation":"rename","new_path":"b.txt","patch":"@@ -1 +1 @@\n-y\n+Y\n"}]}`,
			path: "a.txt", op: "rename", newPath: "b.txt", edits: 1,
		},
		"null patch beside edits": {
			json: `{"files":[{"path":"a.txt","operation":"modify","patch":null,"edits":[{"search":"y\n","replace":"Y\n","line_hint":null}]}],"tests":null}`,
			path: "a.txt", op: "modify", edits: 1,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ParseJSON([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			f := p.Files[0]
			if f.Path != c.path || string(f.Operation) != c.op || f.NewPath != c.newPath || len(f.Edits) != c.edits {
				t.Fatalf("file = %+v", f)
			}
			if c.content != "" && (f.Content == nil || *f.Content != c.content) {
				t.Fatalf("content = %v, want %q", f.Content, c.content)
			}
			if len(p.Verification) != c.verifyLen {
				t.Fatalf("verification = %q, want %d commands", p.Verification, c.verifyLen)
			}
		})
	}
}

// TestProposalJSONRefusesWhatItCannotHonour checks that unknown fields, at
// every level, are named in the error, and that a patch which disagrees
// with its entry is refused instead of guessed at.
func TestProposalJSONRefusesWhatItCannotHonour(t *testing.T) {
	cases := map[string]struct {
		json  string
		is    error
		names []string
	}{
		"unknown top-level fields": {
			json: `{"summary":"s","files":[],"test_commands":["go test"],"notes":"x"}`,
			is:   ErrUnknownField, names: []string{`"notes"`, `"test_commands"`},
		},
		"unknown file and edit fields": {
			json: `{"files":[{"path":"a","diff":"x","edits":[{"search":"a","replace":"b","why":"w"}]}]}`,
			is:   ErrUnknownField, names: []string{`"files[0].diff"`, `"files[0].edits[0].why"`},
		},
		"patch beside edits": {
			json: `{"files":[{"path":"a","patch":"@@ -1 +1 @@\n-a\n+b\n","edits":[{"search":"a","replace":"b"}]}]}`,
			is:   ErrMalformed, names: []string{"exclusive"},
		},
		"patch for another file": {
			json: `{"files":[{"path":"a.txt","patch":"--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-a\n+b\n"}]}`,
			is:   ErrMalformed, names: []string{"b.txt", "not a.txt"},
		},
		"patch for two files": {
			json: `{"files":[{"path":"a.txt","patch":"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-a\n+b\n"}]}`,
			is:   ErrMalformed, names: []string{"2 files", "a.txt, c.txt"},
		},
		"operation disagrees": {
			json: `{"files":[{"path":"a.txt","operation":"delete","patch":"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"}]}`,
			is:   ErrMalformed, names: []string{"operation is delete", "modification"},
		},
		"truncated diff": {
			json: `{"files":[{"path":"a.txt","patch":"@@ -1,3 +1,3 @@\n a\n-b\n"}]}`,
			is:   ErrTruncated,
		},
		"tests of the wrong type": {
			json:  `{"files":[],"tests":{"cmd":"go test"}}`,
			names: []string{"decode proposal JSON"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ParseJSON([]byte(c.json))
			if err == nil {
				t.Fatalf("accepted: %+v", p)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("error %v does not wrap %v", err, c.is)
			}
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
		})
	}
}
