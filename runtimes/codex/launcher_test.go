package codex

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/internal/clitest"
)

// knownLauncherText holds what nativeCodex looks for in a launcher: the
// variables it sets, and nothing else.
const knownLauncherText = "#!/bin/sh\n# CODEX_MANAGED_PACKAGE_ROOT CODEX_MANAGED_BY_NPM CODEX_MANAGED_BY_BUN CODEX_MANAGED_BY_PNPM CODEX_MANAGED_BY_VITE_PLUS\nexit 97\n"

// npmLayout is a global npm install of @openai/codex under prefix, as
// `npm install -g` lays it out: the launcher, bin/codex -> the package's
// bin/codex.js, and the platform package beside it holding native (a
// file written with the given text, or a link to it when link is set).
type npmLayout struct {
	prefix, nm, root, entry, native string
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func newNpmLayout(t *testing.T, launcher string, platform bool) npmLayout {
	t.Helper()
	triple, ok := targetTriples[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		t.Skipf("no Codex build for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	prefix := t.TempDir()
	l := npmLayout{prefix: prefix, nm: filepath.Join(prefix, "lib", "node_modules")}
	l.root = filepath.Join(l.nm, "@openai", "codex")
	writeFile(t, filepath.Join(l.root, "package.json"), `{"name":"@openai/codex","version":"0.169.0","type":"module","bin":{"codex":"bin/codex.js"}}`, 0o644)
	writeFile(t, filepath.Join(l.root, "bin", "codex.js"), launcher, 0o755)
	vendor := filepath.Join(l.root, "vendor")
	if platform {
		pkg := filepath.Join(l.nm, platformPackages[triple])
		writeFile(t, filepath.Join(pkg, "package.json"), `{"name":"@openai/codex","version":"0.169.0-platform"}`, 0o644)
		vendor = filepath.Join(pkg, "vendor")
	}
	l.native = filepath.Join(vendor, triple, "bin", "codex")
	l.entry = filepath.Join(prefix, "bin", "codex")
	if err := os.MkdirAll(filepath.Dir(l.entry), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "lib", "node_modules", "@openai", "codex", "bin", "codex.js"), l.entry); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNativeCodexOfTheNpmLauncher(t *testing.T) {
	l := newNpmLayout(t, knownLauncherText, true)
	writeFile(t, l.native, "#!/bin/sh\n", 0o755)
	env := []string{"HOME=/h", "CODEX_MANAGED_BY_BUN=1", "CODEX_MANAGED_PACKAGE_ROOT=/elsewhere", "CODEX_HOME=/c"}
	bin, got, ok := nativeCodex(l.entry, env)
	if !ok || bin != l.native {
		t.Fatalf("nativeCodex = %q, %v; want %q", bin, ok, l.native)
	}
	want := []string{"HOME=/h", "CODEX_HOME=/c", "CODEX_MANAGED_PACKAGE_ROOT=" + l.root, "CODEX_MANAGED_BY_NPM=1"}
	if !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
	if env[1] != "CODEX_MANAGED_BY_BUN=1" {
		t.Errorf("the caller's environment was changed: %q", env)
	}
}

func TestNativeCodexPackageManagers(t *testing.T) {
	managed := func(env []string) string {
		for _, kv := range env {
			if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CODEX_MANAGED_BY_") {
				return k
			}
		}
		return ""
	}
	t.Run("pnpm", func(t *testing.T) {
		l := newNpmLayout(t, knownLauncherText, true)
		writeFile(t, l.native, "#!/bin/sh\n", 0o755)
		writeFile(t, filepath.Join(l.nm, ".modules.yaml"), "layoutVersion: 5\n", 0o644)
		if _, env, ok := nativeCodex(l.entry, nil); !ok || managed(env) != "CODEX_MANAGED_BY_PNPM" {
			t.Errorf("ok %v, env %q", ok, env)
		}
	})
	t.Run("bun by the environment", func(t *testing.T) {
		l := newNpmLayout(t, knownLauncherText, true)
		writeFile(t, l.native, "#!/bin/sh\n", 0o755)
		if _, env, ok := nativeCodex(l.entry, []string{"npm_config_user_agent=bun/1.2.3 npm/? node/v22"}); !ok || managed(env) != "CODEX_MANAGED_BY_BUN" {
			t.Errorf("ok %v, env %q", ok, env)
		}
	})
	t.Run("vite-plus is left to the launcher", func(t *testing.T) {
		l := newNpmLayout(t, knownLauncherText, true)
		writeFile(t, l.native, "#!/bin/sh\n", 0o755)
		packages := filepath.Join(l.prefix, "packages")
		writeFile(t, filepath.Join(packages, "@openai", "codex.json"), `{"name":"@openai/codex"}`, 0o644)
		if err := os.Symlink(l.entry, filepath.Join(packages, "codex")); err != nil {
			t.Fatal(err)
		}
		if bin, _, ok := nativeCodex(filepath.Join(packages, "codex"), nil); ok {
			t.Errorf("resolved to %q", bin)
		}
	})
}

func TestNativeCodexLeavesWhatItDoesNotKnow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		launcher string
		setup    func(t *testing.T, l npmLayout)
	}{
		{"another variable", knownLauncherText + "# CODEX_SOMETHING_NEW\n", nil},
		{"a PATH of its own", knownLauncherText + "# env.PATH = vendorPath\n", nil},
		{"no package root", "#!/bin/sh\n# CODEX_MANAGED_BY_NPM\n", nil},
		{"another package", knownLauncherText, func(t *testing.T, l npmLayout) {
			writeFile(t, filepath.Join(l.root, "package.json"), `{"name":"codex-fork"}`, 0o644)
		}},
		{"no binary", knownLauncherText, func(t *testing.T, l npmLayout) { _ = os.Remove(l.native) }},
		{"a binary that is not executable", knownLauncherText, func(t *testing.T, l npmLayout) {
			if err := os.Chmod(l.native, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the platform package without its binary", knownLauncherText, func(t *testing.T, l npmLayout) {
			// The launcher looks no further than the platform package
			// once Node finds it, and fails: so does kz, by running it.
			triple := targetTriples[runtime.GOOS+"/"+runtime.GOARCH]
			_ = os.Remove(l.native)
			writeFile(t, filepath.Join(l.root, "vendor", triple, "bin", "codex"), "#!/bin/sh\n", 0o755)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newNpmLayout(t, tc.launcher, true)
			writeFile(t, l.native, "#!/bin/sh\n", 0o755)
			if tc.setup != nil {
				tc.setup(t, l)
			}
			if bin, env, ok := nativeCodex(l.entry, []string{"A=1"}); ok || bin != "" || env != nil {
				t.Errorf("nativeCodex = %q, %q, %v; want the launcher left alone", bin, env, ok)
			}
		})
	}
	t.Run("a native binary", func(t *testing.T) {
		l := newNpmLayout(t, knownLauncherText, true)
		writeFile(t, l.native, "#!/bin/sh\n", 0o755)
		if _, _, ok := nativeCodex(l.native, nil); ok {
			t.Error("the native binary was taken for a launcher")
		}
	})
	t.Run("the package's own vendor directory", func(t *testing.T) {
		// Without a platform package, the launcher runs the binary in its
		// own package's vendor directory; so does kz.
		l := newNpmLayout(t, knownLauncherText, false)
		writeFile(t, l.native, "#!/bin/sh\n", 0o755)
		if bin, _, ok := nativeCodex(l.entry, nil); !ok || bin != l.native {
			t.Errorf("nativeCodex = %q, %v; want %q", bin, ok, l.native)
		}
	})
}

// A runtime configured with the npm launcher starts the native binary,
// with the launcher's environment: the launcher here fails if run, and
// the binary is the fake CLI behind a script that records its
// environment.
func TestRuntimeStartsTheLaunchersBinary(t *testing.T) {
	f := newFake(t, clitest.Sample(t, "codex-app-server.approval-allow.jsonl"))
	l := newNpmLayout(t, knownLauncherText, true)
	envFile := filepath.Join(t.TempDir(), "env.txt")
	writeFile(t, l.native, "#!/bin/sh\nenv > '"+envFile+"'\nexec '"+os.Args[0]+"' \"$@\"\n", 0o755)
	f.rt.cfg.Command = l.entry
	perms := &clitest.Person{Reply: clitest.AllowOnce}
	h := clitest.NewHarness(t, f.WS, single(f), clitest.Options{Answer: perms.Answer})
	final := h.Run(t, context.Background(), "do the task")
	if final.Status != string(engine.StatusComplete) {
		t.Fatalf("final %+v", final)
	}
	data, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the binary was not started: %v", err)
	}
	env := strings.Split(string(data), "\n")
	for _, want := range []string{"CODEX_MANAGED_PACKAGE_ROOT=" + l.root, "CODEX_MANAGED_BY_NPM=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("the binary's environment lacks %s:\n%s", want, data)
		}
	}
}

// The real launcher, run by Node, and kz's start of its binary hand the
// binary the same arguments and environment, for each kind of install
// kz recognises.
func TestRealLauncherConformance(t *testing.T) {
	native := realCodex(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	real := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(native)))))), "@openai", "codex", "bin", "codex.js")
	launcher, err := os.ReadFile(real)
	if err != nil {
		t.Skipf("the pinned CLI has no npm launcher beside it: %v", err)
	}
	dump := "#!/bin/sh\n{ printf 'argv'; printf ' [%s]' \"$@\"; echo; env | grep -v -e '^_=' -e '^KZ_DUMP=' | sort; } > \"$KZ_DUMP\"\n"
	for _, tc := range []struct {
		name     string
		platform bool
		setup    func(t *testing.T, l npmLayout)
		env      []string
	}{
		{name: "npm", platform: true},
		{name: "npm, a variable of another manager set", platform: true, env: []string{"CODEX_MANAGED_BY_PNPM=1", "CODEX_MANAGED_PACKAGE_ROOT=/x"}},
		{name: "pnpm", platform: true, setup: func(t *testing.T, l npmLayout) {
			writeFile(t, filepath.Join(l.nm, ".modules.yaml"), "layoutVersion: 5\n", 0o644)
		}},
		{name: "bun", platform: true, env: []string{"npm_config_user_agent=bun/1.2.3 npm/? node/v22.0.0 linux x64"}},
		{name: "the package's own vendor directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newNpmLayout(t, string(launcher), tc.platform)
			writeFile(t, l.native, dump, 0o755)
			if tc.setup != nil {
				tc.setup(t, l)
			}
			out := t.TempDir()
			env := append([]string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + out}, tc.env...)
			args := []string{"app-server", "-c", "a b"}
			run := func(name, bin string, env []string) string {
				t.Helper()
				path := filepath.Join(out, name)
				cmd := exec.Command(bin, args...)
				cmd.Env = append(env[:len(env):len(env)], "KZ_DUMP="+path)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", name, err, b)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			viaNode := run("launcher", l.entry, env)
			bin, nenv, ok := nativeCodex(l.entry, env)
			if !ok {
				t.Fatal("kz did not recognise the pinned launcher")
			}
			if direct := run("kz", bin, nenv); direct != viaNode {
				t.Errorf("the launcher ran its binary with\n%s\nkz with\n%s", viaNode, direct)
			}
		})
	}
}
