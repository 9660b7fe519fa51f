//go:build linux

package sandbox

// What the sandbox servers add to the per-command properties (which
// routes_test.go runs through both routes): commands in a row share one
// server; a server whose mounts are not the plan's any more is never
// used; a killed command leaves the server usable; concurrent commands;
// Close; fallbacks; nothing a command leaves (processes, IPC objects)
// reaches the next one; the server cannot be taken over from inside.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
)

// serverOf returns the current server of confinement c, or nil.
func (f *fixture) serverOf(c engine.Confinement) *server {
	f.sb.mu.Lock()
	defer f.sb.mu.Unlock()
	return f.sb.srv.byConf[c.OrStrictest()]
}

// sessionProcesses lists the host's processes of the fixture's sandbox:
// its servers' bwrap and the servers, whose arguments name the session.
func (f *fixture) sessionProcesses() []string {
	name := []byte(filepath.Base(filepath.Dir(f.sb.TempDir())))
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, name) && bytes.Contains(b, []byte(serverArg)) {
			out = append(out, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// TestServerRunsCommandsInARow: many commands of one confinement run on
// one server, each with its own output, status and working directory,
// and none leaves a process behind.
func TestServerRunsCommandsInARow(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	mkdir(t, filepath.Join(f.ws, "sub"))
	var first *server
	for i := range 40 {
		token := "1000." + strconv.Itoa(i)
		script := "sleep " + token + " & echo run " + strconv.Itoa(i) + " $(pwd); exit " + strconv.Itoa(i%7)
		dir := f.ws
		if i%2 == 1 {
			dir = filepath.Join(f.ws, "sub")
		}
		r := f.runSpec(t, wsWrite, Spec{Argv: []string{"/bin/bash", "-c", script}, Dir: dir})
		if want := "run " + strconv.Itoa(i) + " " + dir + "\n"; r.out != want || r.code != i%7 || r.setupErr != nil {
			t.Fatalf("%d: %+v, want %q", i, r, want)
		}
		// Nothing of the command is left once Wait returned.
		if sleeperAlive("sleep\x00" + token) {
			t.Fatalf("%d: the background job outlived the call", i)
		}
		sv := f.serverOf(wsWrite)
		if first == nil {
			first = sv
		} else if sv != first {
			t.Fatalf("%d: another server", i)
		}
	}
	for _, c := range []struct {
		script string
		code   int
	}{{"kill -9 $$", 137}, {"kill -TERM $$", 143}, {"exit 255", 255}} {
		if r := f.run(t, wsWrite, c.script); r.code != c.code || r.setupErr != nil {
			t.Errorf("%q: %+v, want %d", c.script, r, c.code)
		}
	}
	if f.serverOf(wsWrite) != first {
		t.Error("a command that killed itself cost the server")
	}
}

// TestServerRetiredWhenThePlanChanges: a command runs on a server only
// while its mount plan is the server's: a new .git, a new hard link or a
// new credential file starts another server, and the old one is gone.
func TestServerRetiredWhenThePlanChanges(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	writeFile(t, filepath.Join(f.ws, "a.txt"), "a")
	steps := []struct {
		name   string
		conf   engine.Confinement
		change func()
		check  string // a script that must print nothing
	}{
		{"new repository", wsWrite, func() { gitDirLayout(t, filepath.Join(f.ws, "new/.git")) },
			"{ echo pwned >> new/.git/config; } 2>/dev/null && echo WROTE"},
		{"new hard link", wsWrite, func() {
			writeFile(t, filepath.Join(f.outside, "victim"), "original")
			if err := os.Link(filepath.Join(f.outside, "victim"), filepath.Join(f.ws, "link")); err != nil {
				t.Skip("no hard links across these directories:", err)
			}
		}, "{ echo pwned >> link; } 2>/dev/null && echo WROTE"},
		{"new credential file", readOnly, func() { writeFile(t, filepath.Join(f.ws, ".env"), "SECRET=leak") },
			"cat .env 2>/dev/null"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if r := f.run(t, st.conf, "true"); r.code != 0 {
				t.Fatalf("%+v", r)
			}
			old := f.serverOf(st.conf)
			st.change()
			r := f.run(t, st.conf, st.check)
			if strings.TrimSpace(r.out) != "" {
				t.Errorf("the change was not protected: %q", r.out)
			}
			if sv := f.serverOf(st.conf); sv == old || sv == nil {
				t.Error("the command ran on the old server")
			}
			waitGone(t, f, old)
		})
	}
}

// waitGone waits until sv's processes are reaped.
func waitGone(t *testing.T, f *fixture, sv *server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.sb.mu.Lock()
		alive := f.sb.srv.all[sv]
		f.sb.mu.Unlock()
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a retired server is still running")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerSeesTheHostReplaceProtectedPaths: when the host replaces a
// path the server keeps read-only or hidden (git writes .git/config by
// renaming a new file over it; a directory removed and made again), the
// kernel detaches the server's mount there, which would open the new
// file. The plan is the same, but the server sees its mount table change
// and refuses; the command runs elsewhere, still confined.
func TestServerSeesTheHostReplaceProtectedPaths(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	writeFile(t, filepath.Join(f.ws, ".claude/settings.json"), "original")
	writeFile(t, filepath.Join(f.ws, "creds/.env"), "SECRET=first")
	replace := func(p, content string) {
		tmp := p + ".lock"
		writeFile(t, tmp, content)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		conf    engine.Confinement
		replace func()
		check   string // must print nothing
		path    string // must not hold "pwned"
	}{
		{".git/config renamed over", wsWriteGt, func() { replace(filepath.Join(f.ws, ".git/config"), "[core]\n") },
			"{ echo pwned >> .git/config; } 2>/dev/null && echo WROTE", ".git/config"},
		{"protected directory made again", wsWrite, func() {
			if err := os.RemoveAll(filepath.Join(f.ws, ".claude")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(f.ws, ".claude/settings.json"), "original")
		}, "{ echo pwned >> .claude/settings.json; } 2>/dev/null && echo WROTE", ".claude/settings.json"},
		{"hidden file renamed over", readOnly, func() { replace(filepath.Join(f.ws, "creds/.env"), "SECRET=second") },
			"cat creds/.env 2>/dev/null", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := f.run(t, c.conf, "true"); r.code != 0 {
				t.Fatalf("%+v", r)
			}
			old := f.serverOf(c.conf)
			c.replace()
			cmd, err := f.sb.Cmd(t.Context(), c.conf, Spec{Argv: []string{"/bin/bash", "-c", c.check}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			_ = cmd.Run()
			if strings.TrimSpace(out.String()) != "" {
				t.Errorf("the replaced path was open: %q", out.String())
			}
			if c.path != "" && strings.Contains(readFile(t, filepath.Join(f.ws, c.path)), "pwned") {
				t.Errorf("%s written", c.path)
			}
			if cmd.srv != nil && cmd.srv.sv == old {
				t.Error("the command ran on the stale server")
			}
			waitGone(t, f, old)
			// The next command gets a new server, with the new file
			// protected.
			if r := f.run(t, c.conf, c.check); strings.TrimSpace(r.out) != "" {
				t.Errorf("the next command: %q", r.out)
			}
		})
	}
}

// TestServerFollowsHostMounts: a server's root is a copy of the host's
// mounts made at its start; once the host mounts or unmounts anything,
// the next command gets a new server, which sees the host's mounts as a
// per-command bwrap would. (Mounting needs root.)
func TestServerFollowsHostMounts(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	if r := f.run(t, readOnly, "true"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	old := f.serverOf(readOnly)
	d := varTmpDir(t, "mnt")
	if err := syscall.Mount("none", d, "tmpfs", 0, ""); err != nil {
		t.Skip("cannot mount here:", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(d, syscall.MNT_DETACH) })
	writeFile(t, filepath.Join(d, "x"), "on the new mount")
	if r := f.run(t, readOnly, "cat "+shellQuote(d+"/x")); r.out != "on the new mount" {
		t.Errorf("the new mount is not seen: %+v", r)
	}
	if f.serverOf(readOnly) == old {
		t.Error("the command ran on the server started before the mount")
	}
	waitGone(t, f, old)
}

// TestServerMissingTargetAppears: a path of the plan that was missing
// when the server mounted (removed between the search and bwrap's
// --ro-bind-try) is not protected on that server; when it appears again,
// the plan is the same, but the server refuses the command.
func TestServerMissingTargetAppears(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	mcp := filepath.Join(f.ws, ".mcp.json")
	writeFile(t, mcp, "original")
	spec := Spec{Argv: []string{"/bin/bash", "-c", "{ echo pwned >> .mcp.json; } 2>/dev/null && echo WROTE"},
		Env: childenv.Build(os.Environ(), childenv.Spec{})}
	plan, err := f.sb.plan(t.Context(), wsWrite, spec)
	if err != nil {
		t.Fatal(err)
	}
	// The server mounts without the file.
	if err := os.Remove(mcp); err != nil {
		t.Fatal(err)
	}
	sv, err := f.sb.serverFor(t.Context(), wsWrite, plan, strings.Join(plan, "\x00"))
	if err != nil || sv == nil {
		t.Fatalf("no server: %v %v", err, f.sb.srv.off)
	}
	f.sb.releaseServer(sv)
	writeFile(t, mcp, "original")
	cmd, err := f.sb.Cmd(t.Context(), wsWrite, spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cmd.plan, "\x00") != sv.plan {
		t.Fatal("the plan changed; the test does not test the missing path")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	if strings.Contains(out.String(), "WROTE") || readFile(t, mcp) != "original" {
		t.Errorf("the file that appeared was writable: %q", out.String())
	}
	if cmd.srv != nil {
		t.Error("the command ran on the server that lacks the mount")
	}
	waitGone(t, f, sv)
}

// TestServerKilledCommand: cancelling a command on a server ends it and
// everything it started at once (its exit says SIGKILL), and the next
// command runs on the same server with nothing of it left; SIGTERM
// reaches the command's process group first, so that it can clean up in
// the grace period kz's bash tool gives.
func TestServerKilledCommand(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	started := func(ctx context.Context, script string) (*Cmd, *bufio.Reader, *os.File) {
		cmd, err := f.sb.Cmd(ctx, wsWrite, Spec{Argv: []string{"/bin/bash", "-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = pw, pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		_ = pw.Close()
		if cmd.srv == nil {
			t.Fatal("not on a server")
		}
		br := bufio.NewReader(pr)
		if line, err := br.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("%q %v", line, err)
		}
		return cmd, br, pr
	}
	// Builtins only, so that no process of the count's own is
	// counted: on a clean server, PID 1 and this bash.
	count := "n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo $n"
	before := f.run(t, wsWrite, count).out
	ctx, cancel := context.WithCancel(t.Context())
	cmd, _, pr := started(ctx, "trap '' TERM HUP INT; setsid sleep 3001 & (sleep 3002 &) ; echo ready; sleep 3003")
	sv := cmd.srv.sv
	cancel()
	err := cmd.Wait()
	_ = pr.Close()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal != syscall.SIGKILL || cmd.ExitCode() != 137 {
		t.Errorf("Wait: %v (code %d)", err, cmd.ExitCode())
	}
	for _, tok := range []string{"3001", "3002", "3003"} {
		if sleeperAlive("sleep\x00" + tok) {
			t.Errorf("sleep %s outlived the call", tok)
		}
	}
	if r := f.run(t, wsWrite, count); r.out != before || f.serverOf(wsWrite) != sv {
		t.Errorf("after the kill: %q processes (%q before), same server %v", r.out, before, f.serverOf(wsWrite) == sv)
	}

	cmd, br, pr := started(t.Context(), "trap 'echo cleaning; exit 3' TERM; echo ready; sleep 3004 & wait")
	if err := cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := br.ReadString(0)
	_ = cmd.Wait()
	_ = pr.Close()
	if rest != "cleaning\n" || cmd.ExitCode() != 3 {
		t.Errorf("SIGTERM: %q, status %d", rest, cmd.ExitCode())
	}
	if sleeperAlive("sleep\x003004") {
		t.Error("the background job outlived the call")
	}
}

// TestServerConcurrentCommands: a command that comes while another of the
// same confinement runs on the server does not wait for it: it runs under
// its own bwrap, confined alike; the server takes the next one again.
func TestServerConcurrentCommands(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	gate := filepath.Join(f.ws, "go")
	long, err := f.sb.Cmd(t.Context(), wsWrite, Spec{Argv: []string{"/bin/bash", "-c", "while [ ! -e go ]; do sleep 0.01; done; echo long"}})
	if err != nil {
		t.Fatal(err)
	}
	var longOut bytes.Buffer
	long.Stdout = &longOut
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cmd, err := f.sb.Cmd(t.Context(), wsWrite, Spec{Argv: []string{"/bin/bash", "-c", "echo pwned >> .git/config; echo short " + strconv.Itoa(i)}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil || out.String() != "short "+strconv.Itoa(i)+"\n" {
			t.Errorf("%d: %v %q", i, err, out.String())
		}
		if cmd.srv != nil {
			t.Errorf("%d: ran on the busy server", i)
		}
	}
	writeFile(t, gate, "")
	if err := long.Wait(); err != nil || longOut.String() != "long\n" || long.srv == nil {
		t.Fatalf("long: %v %q", err, longOut.String())
	}
	if strings.Contains(readFile(t, filepath.Join(f.ws, ".git/config")), "pwned") {
		t.Error(".git/config written")
	}
	if r := f.run(t, wsWrite, "echo again"); r.out != "again\n" || f.serverOf(wsWrite) != long.srv.sv {
		t.Errorf("the server was not reused: %+v", r)
	}
}

// TestServerCloseEndsEverything: Close ends every server and the command
// running on one; no process of the session and no goroutine is left.
func TestServerCloseEndsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newRouteFixture(t, viaServer)
	for _, c := range []engine.Confinement{readOnly, wsWrite, wsWriteNt, wsWriteGt} {
		if r := f.run(t, c, "true"); r.code != 0 {
			t.Fatalf("%s: %+v", c, r)
		}
	}
	cmd, err := f.sb.Cmd(t.Context(), readOnly, Spec{Argv: []string{"/bin/bash", "-c", "setsid sleep 3005 & sleep 3006"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil || cmd.srv == nil {
		t.Fatalf("%v, on a server: %v", err, cmd.srv != nil)
	}
	for !sleeperAlive("sleep\x003006") {
		time.Sleep(10 * time.Millisecond)
	}
	if ps := f.sessionProcesses(); len(ps) != 8 {
		t.Errorf("%d processes before Close, want 4 servers and their bwrap: %q", len(ps), ps)
	}
	if err := f.sb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ExitCode() != 137 {
		t.Errorf("the running command: %v", err)
	}
	if ps := f.sessionProcesses(); len(ps) != 0 {
		t.Errorf("left after Close: %q", ps)
	}
	for _, tok := range []string{"3005", "3006"} {
		if sleeperAlive("sleep\x00" + tok) {
			t.Errorf("sleep %s outlived Close", tok)
		}
	}
}

// TestServerFallbacks: a server that cannot start, or that died, never
// lets a command run unconfined: the command runs under its own bwrap (or
// on a new server), confined alike.
func TestServerFallbacks(t *testing.T) {
	t.Run("cannot start", func(t *testing.T) {
		f := newRouteFixture(t, viaServer)
		gitDirLayout(t, filepath.Join(f.ws, ".git"))
		old := serverExecutable
		serverExecutable = "/bin/true"
		t.Cleanup(func() { serverExecutable = old })
		for i := range 2 {
			cmd, err := f.sb.Cmd(t.Context(), wsWrite, Spec{Argv: []string{"/bin/bash", "-c", "echo pwned >> .git/config; echo ran"}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil || out.String() != "ran\n" || cmd.srv != nil {
				t.Errorf("%d: %v %q on a server %v", i, err, out.String(), cmd.srv != nil)
			}
		}
		if f.sb.srv.off == nil {
			t.Error("servers are still tried")
		}
		if strings.Contains(readFile(t, filepath.Join(f.ws, ".git/config")), "pwned") {
			t.Error(".git/config written")
		}
	})
	t.Run("died", func(t *testing.T) {
		f := newRouteFixture(t, viaServer)
		gitDirLayout(t, filepath.Join(f.ws, ".git"))
		if r := f.run(t, wsWrite, "true"); r.code != 0 {
			t.Fatalf("%+v", r)
		}
		old := f.serverOf(wsWrite)
		if err := syscall.Kill(old.bwrap.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, f, old)
		r := f.run(t, wsWrite, "{ echo pwned >> .git/config; } 2>/dev/null; echo ran")
		if r.out != "ran\n" || f.serverOf(wsWrite) == old {
			t.Errorf("%+v", r)
		}
		if strings.Contains(readFile(t, filepath.Join(f.ws, ".git/config")), "pwned") {
			t.Error(".git/config written")
		}
	})
	t.Run("landlock", func(t *testing.T) {
		f := newFixture(t, KindLandlock)
		cmd, err := f.sb.Cmd(t.Context(), readOnly, Spec{Argv: []string{"/bin/bash", "-c", "echo x > made; echo ran"}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil || out.String() != "ran\n" || cmd.srv != nil || exists(filepath.Join(f.ws, "made")) {
			t.Errorf("%v %q", err, out.String())
		}
	})
}

// TestServerCleansIPC: SysV shared memory, semaphores, message queues and
// POSIX message queues a command leaves are gone for the next command, as
// they would be with the IPC namespace of a per-command bwrap.
func TestServerCleansIPC(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	if !haveProgram("ipcmk") || !exists("/usr/bin/python3") {
		t.Skip("ipcmk or python3 missing")
	}
	mq := `/usr/bin/python3 -c 'import ctypes,os; rt=ctypes.CDLL("librt.so.1"); print("mq", rt.mq_open(b"/kzq", os.O_CREAT|os.O_RDWR, 0o600, None) >= 0)'`
	r := f.run(t, readOnly, "ipcmk -M 4096 && ipcmk -Q && ipcmk -S 2 && "+mq+" && ipcs | grep -c '^0x'; ls /dev/mqueue")
	if !strings.Contains(r.out, "mq True") || !strings.Contains(r.out, "3\n") || !strings.Contains(r.out, "kzq") {
		t.Fatalf("the objects were not made: %+v", r)
	}
	r = f.run(t, readOnly, "ipcs | grep -c '^0x'; ls -A /dev/mqueue")
	if r.out != "0\n" {
		t.Errorf("left for the next command: %q", r.out)
	}
}

// TestServerCannotBeTakenOver: a command can neither trace the server nor
// read its memory, environment or descriptors (as root it may list their
// numbers), has no capabilities (not
// even as root), and cannot kill or stop it with a signal: the next
// command runs on the same server.
func TestServerCannotBeTakenOver(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	if r := f.run(t, wsWrite, "true"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	sv := f.serverOf(wsWrite)
	script := `
cat /proc/1/environ && echo READ-ENVIRON
for fd in /proc/1/fd/*; do readlink $fd && echo READ-FD; cat $fd </dev/null && echo OPENED-FD; done
head -c 16 /proc/1/mem && echo READ-MEM
grep CapEff /proc/self/status
for s in TERM HUP INT QUIT USR1 USR2 SEGV ABRT PIPE STOP KILL; do kill -$s 1; done
`
	if exists("/usr/bin/python3") {
		script += `/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print("attach", l.ptrace(16, 1, 0, 0), "seize", l.ptrace(0x4206, 1, 0, 0))'` + "\n"
	}
	r := f.run(t, wsWrite, script)
	for _, bad := range []string{"READ-ENVIRON", "READ-FD", "OPENED-FD", "READ-MEM", "attach 0", "seize 0"} {
		if strings.Contains(r.out, bad) {
			t.Errorf("%s:\n%s", bad, r.out)
		}
	}
	if !strings.Contains(r.out, "CapEff:\t0000000000000000") {
		t.Errorf("capabilities:\n%s", r.out)
	}
	if r := f.run(t, wsWrite, "echo alive"); r.out != "alive\n" || f.serverOf(wsWrite) != sv {
		t.Errorf("the server did not survive the signals: %+v", r)
	}
}
