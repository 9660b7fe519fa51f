package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/store"
)

// TestE2EDemoInTmux is the end-to-end test of `make e2e`: it builds kz,
// starts `kz --demo --data-dir DIR` in a tmux pane of 120×40, plays the
// demo with real keys and checks the screen with tmux capture-pane at each
// step, then the store. It runs only with KZ_E2E=1 (it needs tmux and
// builds the binary). KZ_BIN=path (what make e2e sets) or KZ_E2E_BIN=path
// uses a prebuilt binary instead.
func TestE2EDemoInTmux(t *testing.T) {
	if os.Getenv("KZ_E2E") != "1" {
		t.Skip("end-to-end test: set KZ_E2E=1 (make e2e) to run kz in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("KZ_E2E=1 but tmux is not installed")
	}
	tmp := t.TempDir()
	bin := e2eBinary(t, tmp)
	data := filepath.Join(tmp, "data")
	work := filepath.Join(tmp, "work")
	// The demo's scratch folder is made under TMPDIR, so the test can find
	// it and check it is gone once kz quits.
	scratch := filepath.Join(tmp, "tmp")
	for _, d := range []string{data, work, scratch, filepath.Join(tmp, "config")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := &pane{t: t, socket: fmt.Sprintf("kz-e2e-%d", os.Getpid()), name: "kz"}
	// A private tmux server: the test never touches the person's sessions.
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	shell := fmt.Sprintf("cd %q && TMPDIR=%q XDG_CONFIG_HOME=%q XDG_DATA_HOME=%q XDG_STATE_HOME=%q TERM=xterm-256color %q --demo --data-dir %q; echo KZ-EXITED-$?; sleep 30",
		work, scratch, filepath.Join(tmp, "config"), data, filepath.Join(tmp, "state"), bin, data)
	p.tmux("new-session", "-d", "-s", p.name, "-x", "120", "-y", "40", shell)

	p.waitFor("the demo welcome", "Welcome to the kz demo")

	// 1. A prompt streams markdown: a frame shows part of the answer while
	// the turn runs (the code block at its end not there yet), then the
	// whole answer.
	p.send("hello")
	p.keys("Enter")
	p.wait("a partly streamed answer", func(s string) bool {
		return strings.Contains(s, "kz drives") && strings.Contains(s, "running") && !strings.Contains(s, "hello from kz")
	})
	p.waitFor("the streamed answer", "hello from kz")
	p.waitGone("the end of the turn", "running")

	// 2. A permission dialog answered with always allow: in the demo the
	// grant is kept in its scratch folder, never in the person's config.
	p.send("clean the build")
	p.keys("Enter")
	p.waitFor("the bash permission dialog", "Permission needed: bash")
	time.Sleep(500 * time.Millisecond) // read the dialog: keys right away are ignored
	p.send("a")
	p.waitFor("the allowed command", "Bash rm -rf build")
	p.waitFor("the answer on its card", "✓ allowed (always)")
	p.waitFor("the answer after allow", "is gone.")
	p.waitGone("the end of the turn", "running")
	if _, err := os.Stat(filepath.Join(tmp, "config", "kz", "grants.toml")); !os.IsNotExist(err) {
		t.Errorf("the demo's always-allow reached the person's config (%v)", err)
	}
	if grants, _ := filepath.Glob(filepath.Join(scratch, "kz-demo-*", ".kz-demo", "config", "grants.toml")); len(grants) != 1 {
		t.Errorf("the demo's grant is not in its scratch folder: %v", grants)
	}

	// 3. A permission dialog answered with deny.
	p.send("fix the greeting")
	p.keys("Enter")
	p.waitFor("the edit permission dialog", "Permission needed: edit_file")
	p.waitFor("the diff in the dialog", `+    fmt.Println("hello")`)
	time.Sleep(500 * time.Millisecond)
	p.send("n")
	p.waitFor("the denied edit", "✗ Edit main.go")
	p.waitFor("the denial on its card", "✗ denied")
	p.waitFor("the answer after deny", "No change made.")
	p.waitGone("the end of the turn", "running")

	// 4. Mode cycle: full-autonomous → patch-proposal.
	p.keys("BTab")
	p.waitFor("the mode divider", "mode full-autonomous → patch-proposal")

	// 4b. A patch proposal opens the diff review: reject the README, apply
	// the rest, and check the workspace.
	p.send("propose a patch")
	p.keys("Enter")
	p.waitFor("the diff review", "Permission needed: apply_patch")
	p.waitFor("the file list", "A greet/README.md")
	p.waitFor("the diff", "+func Hello(name string) string")
	time.Sleep(500 * time.Millisecond)
	p.keys("v")
	p.waitFor("the split view", "· split")
	p.keys("Tab")
	p.pause()
	p.keys("Space")
	p.waitFor("the rejected file", "✗ A greet/README.md")
	p.pause()
	p.send("y")
	p.waitFor("the applied patch", "✓ patch applied")
	p.waitGone("the end of the turn", "running")
	demoDirs, _ := filepath.Glob(filepath.Join(scratch, "kz-demo-*"))
	if len(demoDirs) != 1 {
		t.Fatalf("demo scratch folders under TMPDIR: %v, want one", demoDirs)
	}
	if _, err := os.Stat(filepath.Join(demoDirs[0], "greet", "greet.go")); err != nil {
		t.Errorf("the accepted file was not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(demoDirs[0], "greet", "README.md")); !os.IsNotExist(err) {
		t.Errorf("the rejected file was written (%v)", err)
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 0 {
		t.Errorf("the demo wrote into the folder it was started in: %v %v", entries, err)
	}

	// 5. Runtime switch with the keybinding.
	p.keys("C-r")
	p.waitFor("the runtime picker", "Switch runtime")
	p.keys("Down")
	p.keys("Enter")
	p.waitFor("the runtime divider", "runtime demo/demo-large → demo-lite/lite-1")
	p.waitFor("the status bar", "demo-lite/lite-1 │ patch-proposal")

	// 6. Interrupt a slow answer.
	p.send("tell me a long story")
	p.keys("Enter")
	p.waitFor("the slow answer", "Still writing")
	p.keys("Escape")
	p.waitFor("the interrupted turn", "turn ended: interrupted")

	// 7. Quit.
	p.keys("C-c")
	p.waitFor("kz to exit", "KZ-EXITED-0")
	if _, err := os.Stat(demoDirs[0]); !os.IsNotExist(err) {
		t.Errorf("the demo's scratch folder outlived kz (%v)", err)
	}

	// The store holds the session and its five turns.
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, "kz.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	list, err := st.ListSessions(ctx, "", 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions = %+v, %v; want one", list, err)
	}
	turns, err := st.Turns(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, tu := range turns {
		statuses = append(statuses, tu.Runtime+":"+tu.Status)
	}
	want := []string{"demo:complete", "demo:complete", "demo:complete", "demo:complete", "demo-lite:interrupted"}
	if strings.Join(statuses, ",") != strings.Join(want, ",") {
		t.Fatalf("turns = %v, want %v", statuses, want)
	}
	tr, err := st.Transcript(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, e := range tr {
		if e.Kind == engine.EntryDecision {
			decisions = append(decisions, e.Tool+":"+e.Status)
		}
	}
	if strings.Join(decisions, ",") != "bash:allow,edit_file:deny,apply_patch:allow" {
		t.Fatalf("decisions = %v", decisions)
	}
}

// TestE2EThemesInTmux starts `kz --demo` in tmux three times and reads
// the colours on screen with capture-pane -e: the theme set in the config
// file (light), the --theme flag overriding it (high-contrast), and
// NO_COLOR, which leaves no colour at all. The status bar's background
// tells the themes apart.
func TestE2EThemesInTmux(t *testing.T) {
	if os.Getenv("KZ_E2E") != "1" {
		t.Skip("end-to-end test: set KZ_E2E=1 (make e2e) to run kz in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("KZ_E2E=1 but tmux is not installed")
	}
	tmp := t.TempDir()
	bin := e2eBinary(t, tmp)
	config := filepath.Join(tmp, "config")
	if err := os.MkdirAll(filepath.Join(config, "kz"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "kz", "config.toml"), []byte("theme = \"light\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		lightStatus = "48;2;208;215;222" // #d0d7de
		hcStatus    = "48;2;255;255;255" // #ffffff
		darkStatus  = "48;2;48;54;61"    // #30363d
	)
	cases := []struct {
		name, env, flags string
		want, not        []string
	}{
		{"config", "", "", []string{lightStatus}, []string{hcStatus, darkStatus}},
		{"flag", "", "--theme high-contrast", []string{hcStatus}, []string{lightStatus, darkStatus}},
		{"no-color", "NO_COLOR=1", "--theme high-contrast", nil, []string{"38;2;", "48;2;", "38;5;", "48;5;"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &pane{t: t, socket: fmt.Sprintf("kz-e2e-theme-%d-%d", os.Getpid(), i), name: "kz"}
			t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
			data, scratch := filepath.Join(tmp, "data-"+c.name), filepath.Join(tmp, "tmp-"+c.name)
			if err := os.MkdirAll(scratch, 0o700); err != nil {
				t.Fatal(err)
			}
			shell := fmt.Sprintf("cd %q && %s TMPDIR=%q XDG_CONFIG_HOME=%q XDG_DATA_HOME=%q XDG_STATE_HOME=%q TERM=xterm-256color COLORTERM=truecolor %q --demo --data-dir %q %s; sleep 30",
				tmp, c.env, scratch, config, data, filepath.Join(tmp, "state"), bin, data, c.flags)
			p.tmux("new-session", "-d", "-s", p.name, "-x", "100", "-y", "30", shell)
			p.waitFor("the demo", "Welcome to the kz demo")
			p.waitFor("the status bar", "demo/demo-large")
			s := p.tmux("capture-pane", "-p", "-e", "-t", p.name)
			for _, w := range c.want {
				if !strings.Contains(s, w) {
					t.Errorf("screen lacks colour %s:\n%q", w, s)
				}
			}
			for _, n := range c.not {
				if strings.Contains(s, n) {
					t.Errorf("screen has colour %s:\n%q", n, s)
				}
			}
			// Closing the terminal (the tmux server goes, kz gets SIGHUP)
			// ends kz cleanly: its demo scratch folder is removed.
			if dirs, _ := filepath.Glob(filepath.Join(scratch, "kz-demo-*")); len(dirs) != 1 {
				t.Fatalf("demo scratch folders: %v, want one", dirs)
			}
			_ = exec.Command("tmux", "-L", p.socket, "kill-server").Run()
			deadline := time.Now().Add(10 * time.Second)
			for {
				dirs, _ := filepath.Glob(filepath.Join(scratch, "kz-demo-*"))
				if len(dirs) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("kz left its demo scratch folder behind after a hangup: %v", dirs)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// pane drives one tmux pane.
type pane struct {
	t            *testing.T
	socket, name string
	// timeout bounds each wait; zero is 15 seconds. The real CLIs on a
	// loaded machine need more.
	timeout time.Duration
	// log is kz's log file, whose tail a failed wait prints; may be empty.
	log string
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// send types literal text; keys sends key names (Enter, Escape, BTab, C-r).
func (p *pane) send(text string) { p.tmux("send-keys", "-t", p.name, "-l", text) }

// pause waits as a person does between two deliberate keys in a prompt:
// keys that follow each other faster are taken as typing and go to the
// input (promptkeys.go).
func (p *pane) pause() { time.Sleep(answerGrace + 200*time.Millisecond) }

func (p *pane) keys(names ...string) {
	for _, k := range names {
		p.tmux("send-keys", "-t", p.name, k)
		// Keys sent back to back can reach the terminal as one sequence
		// (esc then a key reads as alt+key); a person is never that fast.
		time.Sleep(150 * time.Millisecond)
	}
}

func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-t", p.name) }

func (p *pane) waitFor(what, text string) {
	p.t.Helper()
	p.wait(what, func(s string) bool { return strings.Contains(s, text) })
}

func (p *pane) waitGone(what, text string) {
	p.t.Helper()
	p.wait(what, func(s string) bool { return !strings.Contains(s, text) })
}

func (p *pane) wait(what string, cond func(string) bool) {
	p.t.Helper()
	timeout := p.timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for {
		s := p.screen()
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; screen:\n%s%s", what, s, p.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logTail is the end of kz's log file, for a failed wait's message: what
// kz was doing when the screen stopped changing.
func (p *pane) logTail() string {
	if p.log == "" {
		return ""
	}
	b, err := os.ReadFile(p.log)
	if err != nil {
		return "\nkz.log: " + err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	return "\nkz.log (last lines):\n" + strings.Join(lines, "\n")
}
