package patch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseDetectsEachFormat(t *testing.T) {
	cases := map[string]struct {
		text string
		want Format
	}{
		"search_replace": {"a.go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", FormatSearchReplace},
		"envelope":       {"*** Begin Patch\n*** Update File: a.go\n-x\n+y\n*** End Patch\n", FormatEnvelope},
		"unified":        {"--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n", FormatUnified},
		"whole":          {"a.go\n```go\npackage a\n```\n", FormatWholeFile},
		"json":           {`{"summary":"s","files":[{"path":"a.go","operation":"modify","edits":[{"search":"x\n","replace":"y\n"}]}]}`, FormatJSON},
		"fenced json":    {"Here:\n```json\n{\"summary\":\"s\",\"files\":[{\"path\":\"a\",\"operation\":\"delete\"}]}\n```\n", FormatJSON},
	}
	for name, c := range cases {
		p, err := Parse(c.text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Format != c.want || len(p.Files) != 1 {
			t.Errorf("%s: format %q with %d files, want %q with 1", name, p.Format, len(p.Files), c.want)
		}
	}
	if _, err := Parse("just some prose, no change"); !errors.Is(err, ErrNoProposal) {
		t.Errorf("prose: %v", err)
	}
}

func TestParseMetadataAndPaths(t *testing.T) {
	p, err := Parse("SUMMARY: fix the bug\n\n**src/a.go**\n```go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n\nVERIFY: go test ./src/...\nRISK: none really\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary != "fix the bug" || len(p.Verification) != 1 || p.Verification[0] != "go test ./src/..." || len(p.Risks) != 1 {
		t.Fatalf("metadata: %+v", p)
	}
	if len(p.Files) != 1 || p.Files[0].Path != "src/a.go" || len(p.Files[0].Edits) != 2 {
		t.Fatalf("files: %+v", p.Files)
	}
}

func TestParseUnifiedGitHeaders(t *testing.T) {
	p, err := Parse("diff --git a/x.sh b/y.sh\nold mode 100644\nnew mode 100755\nsimilarity index 90%\nrename from x.sh\nrename to y.sh\n--- a/x.sh\n+++ b/y.sh\n@@ -1,2 +1,2 @@ func\n #!/bin/sh\n-echo x\n+echo y\n")
	if err != nil {
		t.Fatal(err)
	}
	f := p.Files[0]
	if f.Operation != OpRename || f.NewPath != "y.sh" || f.Mode != "100755" || len(f.Edits) != 1 || f.Edits[0].LineHint != 1 {
		t.Fatalf("%+v", f)
	}
	if _, err := Parse("--- a/b\n+++ b/b\nBinary files differ\n"); err == nil {
		// A binary notice after headers has no hunks: nothing to apply.
		t.Log("binary notice accepted as an empty change")
	}
}

func TestParseRefusesTruncation(t *testing.T) {
	for name, text := range map[string]string{
		"sr no divider":      "a\n<<<<<<< SEARCH\nx\n",
		"sr no replace":      "a\n<<<<<<< SEARCH\nx\n=======\ny\n",
		"envelope no end":    "*** Begin Patch\n*** Update File: a\n-x\n+y\n",
		"unified short":      "--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n x\n-y\n",
		"unterminated fence": "a.go\n```go\npackage a\n",
	} {
		if _, err := Parse(text); !errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v, want ErrTruncated", name, err)
		}
	}
}

// TestParseWholeFileNestedFences: a file holding its own ``` lines inside
// a ``` fence cannot be delimited, so it is refused, whether the inner
// fence has an info string or the content was cut at a bare one; with a
// longer fence the same file parses to its exact content.
func TestParseWholeFileNestedFences(t *testing.T) {
	readme := "# T\n\n```sh\ngo test\n```\n\nmore\n"
	for name, text := range map[string]string{
		"info fence inside":   "README.md\n```\n" + readme + "```\n",
		"cut at a bare fence": "README.md\n```\nintro\n```\ncode\n```\nrest\n```\n",
	} {
		if _, err := Parse(text); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	p, err := Parse("README.md\n````\n" + readme + "````\n\nVERIFY: true\n```sh\nmake test\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 || *p.Files[0].Content != readme {
		t.Fatalf("files %+v", p.Files)
	}
}

func TestParseLimits(t *testing.T) {
	big := strings.Repeat("x", MaxInputBytes+1)
	if _, err := Parse(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size: %v", err)
	}
	many := strings.Repeat("\n", MaxInputLines+1)
	if _, err := Parse(many); !errors.Is(err, ErrTooLarge) {
		t.Errorf("lines: %v", err)
	}
}

func TestPlaceholderLine(t *testing.T) {
	yes := []string{"...", "  // ... existing code ...", "# rest of file unchanged", "/* ... */", "// ... rest of code", "<!-- remaining content -->", "… existing code …", "// existing code here"}
	no := []string{"args...", "fmt.Println(\"...\")", "// unchanged. In particular, it does not", "// rest of the algorithm follows below", "x := y // ...which is fine", "return nil"}
	for _, l := range yes {
		if !placeholderLine(l) {
			t.Errorf("%q should be a placeholder", l)
		}
	}
	for _, l := range no {
		if placeholderLine(l) {
			t.Errorf("%q should not be a placeholder", l)
		}
	}
}

func TestCheckPath(t *testing.T) {
	good := map[string]string{"a.go": "a.go", "./dir/b.go": "dir/b.go", ".github/x.yml": ".github/x.yml"}
	for in, want := range good {
		if got, err := CheckPath(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "/abs", "C:/x", "a/../b", "..", "a//b", "a/./b", ".git/config", "x/.GIT/y", "a\x00b", "a\nb", "a\u202eb", "a\\b", "\xff"} {
		if _, err := CheckPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestJSONSchemaAndPromptAreEmbedded(t *testing.T) {
	if !strings.Contains(JSONSchema(), `"base_sha256"`) || !strings.Contains(JSONSchema(), `"verification"`) {
		t.Error("schema lacks fields")
	}
	if !strings.Contains(PromptText(), "<<<<<<< SEARCH") || !strings.Contains(PromptText(), "VERIFY:") {
		t.Error("prompt lacks the format")
	}
	// The prompt's own example must parse with the parser that reads it back.
	if _, err := Parse(PromptText()); err != nil {
		t.Errorf("prompt example does not parse: %v", err)
	}
}

// TestStructuredOutputWithNullsParses: strict structured output makes
// every schema field required and nullable, so a provider returns nulls
// for what does not apply; such a proposal parses and validates.
func TestStructuredOutputWithNullsParses(t *testing.T) {
	if !json.Valid([]byte(JSONSchema())) {
		t.Fatal("the schema is not valid JSON")
	}
	text := `{"summary":"s","files":[` +
		`{"path":"a.txt","operation":"modify","new_path":null,"base_sha256":null,"edits":[{"search":"one\n","replace":"ONE\n","line_hint":null}],"content":null},` +
		`{"path":"b.txt","operation":"add","new_path":null,"base_sha256":null,"edits":[],"content":"new\n"}],` +
		`"verification":["true"],"risks":[]}`
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"a.txt": "one\n"})
	a, _ := newTestApplier(t, work)
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) != 2 || string(plan.Files[0].NewContent) != "ONE\n" || string(plan.Files[1].NewContent) != "new\n" || p.Verification[0] != "true" {
		t.Fatalf("plan %+v", plan.Files)
	}
}

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		"a.go\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
		"*** Begin Patch\n*** Update File: a\n@@ f\n x\n-y\n+z\n*** End of File\n*** Move to: b\n*** End Patch\n",
		"diff --git a/a b/a\nnew file mode 100755\n--- /dev/null\n+++ b/a\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n",
		"--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n x\n-y\n+z\n \n",
		"a.go\n```go\nx\n```\n```go:b.go\ny\n```\n",
		`{"files":[{"path":"a","operation":"rename","new_path":"b"}]}`,
		"@@ -999999999999999999,1 +1 @@\n",
	} {
		f.Add(s)
	}
}

func FuzzParseSearchReplace(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { checkParsed(t, s, ParseSearchReplace) })
}

func FuzzParseEnvelope(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { checkParsed(t, s, ParseEnvelope) })
}

func FuzzParseUnified(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { checkParsed(t, s, ParseUnified) })
}

func FuzzParseWholeFile(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { checkParsed(t, s, ParseWholeFile) })
}

// FuzzParseAuto also runs the matching ladder on every parsed edit against
// a fixed file, so the matcher is fuzzed with parser output.
func FuzzParseAuto(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		lines := []string{"x", "y", "  z", "x", "", "...", "y"}
		for _, fc := range p.Files {
			for _, e := range fc.Edits {
				loc, prob := locateEdit(lines, e, e.LineHint-1)
				if prob == nil && (loc.start < 0 || loc.start+loc.n > len(lines) || len(loc.repl) != len(loc.from)) {
					t.Fatalf("bad location %+v for %+v", loc, e)
				}
			}
		}
	})
}

func checkParsed(t *testing.T, s string, parse func(string) (*Proposal, error)) {
	p, err := parse(s)
	if err != nil {
		if p != nil {
			t.Fatal("proposal returned with an error")
		}
		return
	}
	if len(p.Files) == 0 {
		t.Fatal("success without files")
	}
}

// FuzzValidate parses any text and validates it against a small in-memory
// workspace: whatever the input, validation returns a plan or an error,
// and a plan's new contents are within the size limit.
func FuzzValidate(f *testing.F) {
	fuzzSeeds(f)
	f.Add("a.go\n<<<<<<< SEARCH\nx\n...\ny\n=======\nX\n...\nY\n>>>>>>> REPLACE\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		fsys := newMemFS(map[string][]byte{"a.go": []byte("x\n\ty\n  z\r\nx\n\n...\ny"), "b": []byte("\xef\xbb\xbfb\n")})
		a := &Applier{FS: fsys}
		plan, err := a.Validate(context.Background(), p)
		if err != nil {
			return
		}
		for _, f := range plan.Files {
			if int64(len(f.NewContent)) > DefaultMaxFileBytes {
				t.Fatalf("%s: %d bytes", f.Path, len(f.NewContent))
			}
		}
		_ = Preview(plan)
	})
}
