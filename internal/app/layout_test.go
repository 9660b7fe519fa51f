package app

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kz's layout: who may import whom, and what the top level holds. app is
// the one package allowed to import everything (with internal/cli, which
// runs it), so the rules of the rest are checked beside it.

const module = "github.com/kaizen-code/kz"

// goList runs go list in the module's root and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the packages with")
	}
	cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// moduleRoot is the folder of go.mod: two up from internal/app.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod two folders up from internal/app: %v", err)
	}
	return root
}

// kzDeps maps each of kz's packages to the kz packages it imports,
// directly or not (go list -deps: tests' imports are not counted).
func kzDeps(t *testing.T) map[string][]string {
	t.Helper()
	deps := map[string][]string{}
	for _, line := range goList(t, "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var own []string
		for _, d := range f[1:] {
			if d == module || strings.HasPrefix(d, module+"/") {
				own = append(own, d)
			}
		}
		deps[f[0]] = own
	}
	return deps
}

// within reports whether pkg is dir or a package below it.
func within(pkg, dir string) bool {
	return pkg == module+"/"+dir || strings.HasPrefix(pkg, module+"/"+dir+"/")
}

// TestImportRules: the domain packages never reach each other through
// the store or a runtime to wire themselves (the adapters live here), the
// engine is only the contract, and only kz's command line uses the wiring.
func TestImportRules(t *testing.T) {
	deps := kzDeps(t)
	if len(deps) < 20 {
		t.Fatalf("go list found %d packages; the module is not where the test looks", len(deps))
	}
	type rule struct {
		from, to, why string
	}
	rules := []rule{
		{"tui", "runtimes", "the TUI drives a session, never a runtime (the demo's runtimes are built in internal/app)"},
		{"tui", "store", "the TUI takes its services through small interfaces that internal/app fills"},
		{"patch", "store", "patch declares the change log it needs; internal/app keeps it in the store"},
		{"runtimes", "store", "runtimes save snapshots through tools.SnapshotSaver; internal/app keeps them in the store"},
		{"engine", "", "engine is the contract and imports no other kz package"},
	}
	for pkg, ds := range deps {
		for _, r := range rules {
			if !within(pkg, r.from) {
				continue
			}
			for _, d := range ds {
				if r.to == "" && !within(d, r.from) || r.to != "" && within(d, r.to) {
					t.Errorf("%s imports %s: %s", pkg, d, r.why)
				}
			}
		}
		// The wiring is used by the command line alone, and the command
		// line by main alone.
		for _, d := range ds {
			switch {
			case within(d, "internal/app") && pkg != module && !within(pkg, "internal/cli"):
				t.Errorf("%s imports %s: only kz's command line may use the wiring", pkg, d)
			case within(d, "internal/cli") && pkg != module:
				t.Errorf("%s imports %s: only main may use the command line", pkg, d)
			}
		}
	}
}

// TestTopLevelLayout: the top level holds what the design card names and
// nothing else: main.go (a few lines over internal/cli), the domain
// folders, internal/, third_party/, testdata/, and the project's files.
// A new folder or Go file belongs in one of these.
func TestTopLevelLayout(t *testing.T) {
	root := moduleRoot(t)
	allowed := []string{
		"main.go", "tui", "engine", "runtimes", "patch", "tools", "store", "themes", "testdata", "internal", "third_party",
		"README.md", "Makefile", "go.mod", "go.sum", "LICENSE", ".ci",
		// The tools' own files.
		".git", ".gitignore", ".golangci.yml",
	}
	ignored := gitignored(t, root)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if slices.Contains(allowed, name) || slices.ContainsFunc(ignored, func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
			continue
		}
		t.Errorf("the top level holds %s, which the layout does not name (see README.md, Where things live)", name)
	}
	// The top level's Go package is main.go alone: commands live in
	// internal/cli, wiring in internal/app.
	for _, line := range goList(t, "-f", "{{range .GoFiles}}{{.}} {{end}}{{range .TestGoFiles}}{{.}} {{end}}", ".") {
		if files := strings.Fields(line); !slices.Equal(files, []string{"main.go"}) {
			t.Errorf("package main holds %v, want main.go alone", files)
		}
	}
}

// gitignored returns the top-level patterns of the root .gitignore (what
// builds and tests leave behind, such as bin/), as names to match.
func gitignored(t *testing.T, root string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".gitignore"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.TrimSpace(sc.Text())
		if p == "" || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "!") {
			continue
		}
		p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
		if !strings.Contains(p, "/") {
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
