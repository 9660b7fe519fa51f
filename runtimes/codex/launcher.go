package codex

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/internal/childenv"
)

// nativeCodex returns the native Codex binary that the npm launcher at
// path (already looked up on PATH) would run, and env as the launcher
// would hand it over. ok is false when path is not a launcher kz knows,
// which is then run as it is.
//
// `npm install -g @openai/codex` puts a Node script on PATH, bin/codex.js,
// which finds the platform's native binary and runs it: with execve where
// Node has process.execve (22.15 and later), else as a child that Node
// waits on. Either
// way every start of Codex pays for a Node start first (about 60 ms on
// Node 20 on a 2-core machine, against 5 ms for `codex --version` run
// natively), and on older Node a Node process of some 45 MB sits between
// kz and Codex for the whole turn. kz starts the binary itself instead.
//
// The launcher passes Codex three things: the arguments, unchanged; the
// environment, with CODEX_MANAGED_PACKAGE_ROOT (the package's real path)
// and one CODEX_MANAGED_BY_* variable naming the package manager that
// installed it; and nothing else. kz does the same, and only for a
// launcher whose text names no other CODEX_ variable and no PATH (older
// launchers put a directory of their own on PATH): a launcher that passes
// anything kz does not know is run as it is.
func nativeCodex(path string, env []string) (native string, nenv []string, ok bool) {
	entry, err := filepath.Abs(path)
	if err != nil {
		return "", nil, false
	}
	script, err := filepath.EvalSymlinks(entry)
	if err != nil || filepath.Base(script) != "codex.js" || filepath.Base(filepath.Dir(script)) != "bin" {
		return "", nil, false
	}
	root := filepath.Dir(filepath.Dir(script))
	if !isCodexPackage(filepath.Join(root, "package.json")) {
		return "", nil, false
	}
	text, err := os.ReadFile(script)
	if err != nil || !knownLauncher(text) {
		return "", nil, false
	}
	triple, ok := targetTriples[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return "", nil, false
	}
	bin := filepath.Join(vendorRoot(script, root, platformPackages[triple]), triple, "bin", "codex")
	if !isExecutable(bin) {
		// The launcher then reports the missing package itself.
		return "", nil, false
	}
	manager, ok := packageManager(root, filepath.Dir(entry), env)
	if !ok {
		return "", nil, false
	}
	// The launcher deletes the variables it knows and sets two of them.
	out := childenv.Strip(env, slices.Collect(maps.Keys(launcherVars))...)
	out = append(out, "CODEX_MANAGED_PACKAGE_ROOT="+root, "CODEX_MANAGED_BY_"+manager+"=1")
	return bin, out, true
}

// targetTriples are the Rust targets the launcher knows, by Go's GOOS/GOARCH.
var targetTriples = map[string]string{
	"linux/amd64":  "x86_64-unknown-linux-musl",
	"linux/arm64":  "aarch64-unknown-linux-musl",
	"darwin/amd64": "x86_64-apple-darwin",
	"darwin/arm64": "aarch64-apple-darwin",
}

// platformPackages are the npm packages that hold each target's binary.
var platformPackages = map[string]string{
	"x86_64-unknown-linux-musl":  "@openai/codex-linux-x64",
	"aarch64-unknown-linux-musl": "@openai/codex-linux-arm64",
	"x86_64-apple-darwin":        "@openai/codex-darwin-x64",
	"aarch64-apple-darwin":       "@openai/codex-darwin-arm64",
}

// launcherVars are the variables the launcher kz knows sets or clears.
var launcherVars = map[string]bool{
	"CODEX_MANAGED_PACKAGE_ROOT": true, "CODEX_MANAGED_BY_NPM": true, "CODEX_MANAGED_BY_BUN": true,
	"CODEX_MANAGED_BY_PNPM": true, "CODEX_MANAGED_BY_VITE_PLUS": true,
}

// codexVar finds the CODEX_ variables a launcher names; compiled on first
// use, so that every kz process does not pay for it at start.
var codexVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`CODEX_[A-Z0-9_]+`) })

// knownLauncher reports a launcher that hands Codex nothing but what
// nativeCodex hands it (see there).
func knownLauncher(text []byte) bool {
	if !bytes.Contains(text, []byte("CODEX_MANAGED_PACKAGE_ROOT")) || bytes.Contains(text, []byte("PATH")) {
		return false
	}
	for _, v := range codexVar().FindAll(text, -1) {
		if !launcherVars[string(v)] {
			return false
		}
	}
	return true
}

// isCodexPackage reports a package.json of the @openai/codex package.
func isCodexPackage(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var p struct {
		Name string `json:"name"`
	}
	return json.Unmarshal(data, &p) == nil && p.Name == "@openai/codex"
}

// vendorRoot is the directory the launcher looks for the binary in: the
// platform package's vendor directory, the package found as Node resolves
// it from the script (each ancestor's node_modules, from the nearest), or
// else the package's own vendor directory.
func vendorRoot(script, root, pkg string) string {
	for dir := filepath.Dir(script); ; dir = filepath.Dir(dir) {
		if filepath.Base(dir) != "node_modules" {
			if pj := filepath.Join(dir, "node_modules", pkg, "package.json"); isFile(pj) {
				return filepath.Join(filepath.Dir(pj), "vendor")
			}
		}
		if parent := filepath.Dir(dir); parent == dir {
			return filepath.Join(root, "vendor")
		}
	}
}

// packageManager names the package manager that installed the package at
// root, as the launcher tells it (CODEX_MANAGED_BY_<name>): pnpm when a
// pnpm node_modules above root or entry (the directory the launcher was
// found in) owns the package, bun by the environment or a global bun
// install's path, npm otherwise. ok is false for an install by Vite+,
// whose ownership record kz does not read: its launcher is run as it is.
func packageManager(root, entry string, env []string) (name string, ok bool) {
	for _, start := range []string{root, entry} {
		for dir := start; ; dir = filepath.Dir(dir) {
			if filepath.Base(dir) == "packages" && isFile(filepath.Join(dir, "@openai", "codex.json")) {
				return "", false
			}
			if pnpmOwns(filepath.Join(dir, "node_modules"), root) {
				return "PNPM", true
			}
			if parent := filepath.Dir(dir); parent == dir {
				break
			}
		}
	}
	agent, execPath := childenv.Lookup(env, "npm_config_user_agent"), childenv.Lookup(env, "npm_execpath")
	switch {
	case strings.Contains(agent, "bun/"), strings.Contains(execPath, "bun"),
		strings.Contains(filepath.ToSlash(filepath.Join(root, "bin")), ".bun/install/global"):
		return "BUN", true
	}
	return "NPM", true
}

// pnpmOwns reports a pnpm node_modules whose @openai/codex is root.
func pnpmOwns(nodeModules, root string) bool {
	if !isFile(filepath.Join(nodeModules, ".modules.yaml")) {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(nodeModules, "@openai", "codex"))
	return err == nil && real == root
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
