//go:build linux

package sandbox

// The sandbox servers' security guarantees beyond the property tests that
// routes_test.go runs through both routes: a command on a server is
// confined exactly like one under its own bwrap (the same mounts,
// namespaces, credentials, limits and descriptors, compared side by
// side); nothing a command starts reaches the next command, however it
// hides; one command's environment never reaches the next; argv, the
// working directory, the environment and stdin are honoured as under
// bwrap; a timeout ends the whole tree; a server that crashes, is killed
// or hangs is never used again and no command runs unconfined; many
// commands at once, and Close in their middle, are safe (run with -race).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/childenv"
)

// confinementProbe prints, in sections, everything that makes up a
// command's confinement and what it is given.
const confinementProbe = `
echo '## mounts'; cat /proc/self/mountinfo
echo '## status'; grep -E '^(Uid|Gid|Groups|NoNewPrivs|Seccomp|Cap(Inh|Prm|Eff|Bnd|Amb)):' /proc/self/status
echo '## idmaps'; cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups
echo '## ns'; for n in cgroup ipc mnt net pid time user uts; do echo "$n $(readlink /proc/self/ns/$n)"; done
echo '## net'; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort
echo '## limits'; ulimit -a; umask
echo '## userns'; cat /proc/sys/user/max_user_namespaces
echo '## fds'; ls /proc/self/fd
echo '## tty'; read -r pid comm state ppid pgrp sess tty rest < /proc/$$/stat; echo "tty $tty"; tty
echo '## signals'; grep -E '^Sig(Blk|Ign):' /proc/self/status
echo '## env'; env | sort
echo '## cwd'; pwd
echo '## hostname'; cat /proc/sys/kernel/hostname
`

// probeSections splits confinementProbe's output into its sections.
func probeSections(t *testing.T, out string) map[string][]string {
	t.Helper()
	secs := map[string][]string{}
	cur := ""
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if name, ok := strings.CutPrefix(l, "## "); ok {
			cur = name
			secs[cur] = []string{}
			continue
		}
		if cur == "" {
			t.Fatalf("output before the first section: %q", out)
		}
		secs[cur] = append(secs[cur], l)
	}
	return secs
}

// normalizeMounts keeps what makes a mount in each mountinfo line (its
// root, mount point, options, file system, source and super options) and
// drops the IDs and peer groups, which differ between two namespaces
// built alike.
func normalizeMounts(lines []string) []string {
	var out []string
	for _, l := range lines {
		pre, post, ok := strings.Cut(l, " - ")
		f := strings.Fields(pre)
		if !ok || len(f) < 6 {
			out = append(out, "unparsed: "+l)
			continue
		}
		out = append(out, strings.Join([]string{f[3], f[4], f[5], post}, " "))
	}
	return out
}

// TestServerConfinementMatchesPerCommand: for every confinement, a command
// on the server and one under its own bwrap of the same sandbox see the
// same mounts (the server adds only /dev/mqueue, of its own IPC
// namespace), the same user, ID maps, namespaces (their own or the
// host's), network devices, limits, umask, descriptors, signal
// dispositions, environment and directory, and neither has a controlling
// terminal; the server's command
// has no capability the per-command one lacks.
func TestServerConfinementMatchesPerCommand(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	writeFile(t, filepath.Join(f.ws, ".claude/settings.json"), "{}")
	writeFile(t, filepath.Join(f.ws, "sub/.env"), "SECRET=x")
	writeFile(t, filepath.Join(f.home, ".ssh/id_rsa"), "KEY")
	mkdir(t, filepath.Join(f.ws, "sub/dir"))
	hostNS := map[string]string{}
	for _, n := range []string{"cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"} {
		hostNS[n], _ = os.Readlink("/proc/self/ns/" + n)
	}
	spec := Spec{Argv: []string{"/bin/bash", "-c", confinementProbe}, Dir: filepath.Join(f.ws, "sub/dir"),
		Env: append(childenv.Build(os.Environ(), childenv.Spec{}), "KZ_PROBE=a b=c")}
	for _, c := range []engine.Confinement{readOnly, wsWrite, wsWriteNt, wsWriteGt} {
		t.Run(c.String(), func(t *testing.T) {
			got := map[route]map[string][]string{}
			for _, rt := range []route{perCommand, viaServer} {
				f.route = rt
				r := f.runSpec(t, c, spec)
				if r.code != 0 || r.setupErr != nil {
					t.Fatalf("%s: %+v", rt, r)
				}
				secs := probeSections(t, r.out)
				secs["mounts"] = normalizeMounts(secs["mounts"])
				for i, l := range secs["ns"] {
					n, id, _ := strings.Cut(l, " ")
					where := "own"
					if id == hostNS[n] {
						where = "host's"
					}
					secs["ns"][i] = n + " " + where
				}
				got[rt] = secs
			}
			per, srv := got[perCommand], got[viaServer]
			srv["mounts"] = slices.DeleteFunc(srv["mounts"], func(m string) bool {
				return strings.Fields(m)[1] == mqueueDir
			})
			// The server's command gets its three descriptors and
			// nothing else (ls's own directory is 3). A per-command
			// bwrap passes on whatever kz inherited without
			// close-on-exec as well, which the server does not.
			if !slices.Equal(srv["fds"], []string{"0", "1", "2", "3"}) {
				t.Errorf("descriptors on the server: %q", srv["fds"])
			}
			for _, fd := range srv["fds"] {
				if !slices.Contains(per["fds"], fd) {
					t.Errorf("descriptor %s on the server only", fd)
				}
			}
			for name := range per {
				if name == "status" || name == "fds" {
					continue
				}
				if !slices.Equal(per[name], srv[name]) {
					t.Errorf("%s differ:\nper-command:\n%s\nserver:\n%s", name, strings.Join(per[name], "\n"), strings.Join(srv[name], "\n"))
				}
			}
			if len(srv) != len(per) {
				t.Errorf("sections: %d on the server, %d per command", len(srv), len(per))
			}
			checkStatus(t, per["status"], srv["status"])
			if !slices.Contains(srv["ns"], "pid own") || !slices.Contains(srv["ns"], "mnt own") || !slices.Contains(srv["ns"], "ipc own") ||
				slices.Contains(srv["ns"], "net own") == c.Network {
				t.Errorf("namespaces: %q", srv["ns"])
			}
		})
	}
}

// checkStatus compares the /proc/self/status lines of the probe: the same
// user, groups, no_new_privs and seccomp mode; the server's capabilities
// (each set) a subset of the per-command ones.
func checkStatus(t *testing.T, per, srv []string) {
	t.Helper()
	parse := func(lines []string) map[string]string {
		m := map[string]string{}
		for _, l := range lines {
			k, v, _ := strings.Cut(l, ":")
			m[k] = strings.TrimSpace(v)
		}
		return m
	}
	p, s := parse(per), parse(srv)
	if len(p) != 10 || len(s) != 10 {
		t.Fatalf("status: %q / %q", per, srv)
	}
	for k, pv := range p {
		if !strings.HasPrefix(k, "Cap") {
			if s[k] != pv {
				t.Errorf("%s: %q on the server, %q per command", k, s[k], pv)
			}
			continue
		}
		pc, err1 := strconv.ParseUint(pv, 16, 64)
		sc, err2 := strconv.ParseUint(s[k], 16, 64)
		if err1 != nil || err2 != nil || sc&^pc != 0 {
			t.Errorf("%s: %q on the server, %q per command", k, s[k], pv)
		}
	}
}

// hostProcesses counts the host's processes whose command line holds
// token.
func hostProcesses(token string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(token)) {
			n++
		}
	}
	return n
}

// TestServerLeavesNothingForTheNextCommand: whatever a command leaves
// running, however it hides (a fork loop racing the kill, a stopped
// process, one that ignores every signal, a subreaper with orphans, a
// parent that never reaps, a setsid double fork), the next command on
// the same server sees only its own processes and none of them runs on
// the host; a variable one command exports or is given is not in the next
// one's environment, which is exactly what its spec says.
func TestServerLeavesNothingForTheNextCommand(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	// Builtins only, so that no process of the count's own is
	// counted: on a clean server, PID 1 and this bash.
	count := "n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo $n"
	base := f.run(t, wsWrite, count)
	if base.out != "2\n" {
		t.Fatalf("a clean server runs %q processes with the count, want 2", base.out)
	}
	sv := f.serverOf(wsWrite)
	tok := func(i int) string { return fmt.Sprintf("6%03d.%d", i, os.Getpid()%1000) }
	subreaper := ""
	if exists("/usr/bin/python3") {
		subreaper = `/usr/bin/python3 -c 'import ctypes,os,time; ctypes.CDLL(None).prctl(36,1,0,0,0); os.system("(sleep %[1]s &) &"); print("reaper"); time.sleep(3600)' &`
	}
	for i, script := range []string{
		"(while :; do sleep %[1]s & done) & sleep 0.2",
		"sleep %[1]s & kill -STOP $!",
		"bash -c 'for s in $(seq 1 31); do trap \"\" $s 2>/dev/null; done; exec -a sleep-%[1]s sleep %[1]s' &",
		subreaper,
		"bash -c '(sleep %[1]s; :) & (exit 0) & exec sleep %[1]s' &",
		"setsid bash -c 'setsid sleep %[1]s & (setsid sleep %[1]s &) &' &",
		"nohup setsid -f sleep %[1]s >/dev/null 2>&1",
	} {
		if script == "" {
			continue
		}
		token := tok(i)
		r := f.run(t, wsWrite, fmt.Sprintf(script, token)+"; sleep 0.1; echo left")
		if !strings.Contains(r.out, "left") {
			t.Fatalf("%d: %+v", i, r)
		}
		if n := hostProcesses(token); n != 0 {
			t.Errorf("%d %q: %d processes outlived the call", i, script, n)
		}
		if r := f.run(t, wsWrite, count); r.out != base.out {
			t.Errorf("%d %q: the next command sees %q processes, %q before", i, script, r.out, base.out)
		}
		if f.serverOf(wsWrite) != sv {
			t.Errorf("%d: another server", i)
		}
	}

	// The environment: what one command is given or exports is not the
	// next one's, whose environment is exactly its spec's and TMPDIR.
	first := Spec{Argv: []string{"/bin/bash", "-c", "export KZ_LEAK_EXPORTED=1; echo KZ_LEAK_EXPORTED=1 >> /proc/self/environ 2>/dev/null; env"},
		Env: []string{"PATH=/usr/bin:/bin", "KZ_LEAK_GIVEN=secret-of-the-first"}}
	if r := f.runSpec(t, readOnly, first); !strings.Contains(r.out, "KZ_LEAK_GIVEN=secret-of-the-first") {
		t.Fatalf("the first command's environment: %+v", r)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "KZ_NEXT=1"}
	r := f.runSpec(t, readOnly, Spec{Argv: []string{"/usr/bin/env"}, Env: env})
	got := strings.Split(strings.TrimSpace(r.out), "\n")
	want := append(slices.Clone(env), "TMPDIR=/tmp", "PWD="+f.ws)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the next command's environment: %q, want %q", got, want)
	}
}

// TestServerHonoursTheSpec: argv (spaces, quotes, empty and non-ASCII
// arguments), a program found in the PATH of the spec's environment or
// relative to the working directory, a working directory with spaces,
// environment values holding '=' and newlines, and stdin from a file are
// all given to the command on the server exactly as under its own bwrap.
func TestServerHonoursTheSpec(t *testing.T) {
	f := newFixture(t, KindBubblewrap)
	dir := filepath.Join(f.ws, "a dir", "sub")
	mkdir(t, dir)
	bin := filepath.Join(f.ws, "bin")
	writeFile(t, filepath.Join(bin, "kz-tool"), "#!/bin/sh\nprintf 'tool [%s]' \"$0\"; printf ' <%s>' \"$@\"; printf ' in %s\\n' \"$(pwd)\"\n")
	writeFile(t, filepath.Join(dir, "local-tool"), "#!/bin/sh\necho local $1 in \"$(pwd)\"\n")
	for _, p := range []string{filepath.Join(bin, "kz-tool"), filepath.Join(dir, "local-tool")} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	input := filepath.Join(f.outside, "input")
	writeFile(t, input, "line one\nline two\n")
	args := []string{"a b", "", "c'd\"e", "é\nx", "--flag=v=w", "$HOME", "*"}
	for name, spec := range map[string]Spec{
		"argv":         {Argv: append([]string{"/usr/bin/printf", "<%s>"}, args...), Dir: dir},
		"path lookup":  {Argv: append([]string{"kz-tool"}, args...), Dir: dir, Env: []string{"PATH=/nonexistent:" + bin + ":/usr/bin:/bin"}},
		"relative":     {Argv: []string{"./local-tool", "x y"}, Dir: dir},
		"env":          {Argv: []string{"/usr/bin/env"}, Env: []string{"A=1=2", "B=line\nbreak", "C=", "PATH=/bin"}},
		"not found":    {Argv: []string{"kz-no-such-tool"}, Env: []string{"PATH=" + bin}},
		"not runnable": {Argv: []string{filepath.Join(f.ws, "a dir")}},
		"stdin":        {Argv: []string{"/usr/bin/tac"}},
	} {
		t.Run(name, func(t *testing.T) {
			var outs [2]string
			var codes [2]int
			for i, rt := range []route{perCommand, viaServer} {
				in, err := os.Open(input)
				if err != nil {
					t.Fatal(err)
				}
				var stdin *os.File
				if name == "stdin" {
					stdin = in
				}
				outs[i], codes[i] = f.runWithStdin(t, rt, wsWrite, spec, stdin)
				_ = in.Close()
			}
			if name == "not found" || name == "not runnable" {
				// The messages differ (bwrap's, the server's); the
				// status and that nothing ran do not.
				if codes[0] == 0 || codes[1] == 0 {
					t.Errorf("statuses %v", codes)
				}
				return
			}
			if outs[0] != outs[1] || codes[0] != codes[1] || codes[0] != 0 {
				t.Errorf("per command (%d):\n%q\non the server (%d):\n%q", codes[0], outs[0], codes[1], outs[1])
			}
		})
	}
}

// runWithStdin runs spec on route rt with stdin (nil: none) and returns
// its output and status; on the server route it checks that it ran there.
func (f *fixture) runWithStdin(t *testing.T, rt route, c engine.Confinement, spec Spec, stdin *os.File) (string, int) {
	t.Helper()
	f.route = rt
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd, err := f.command(ctx, c, spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	switch tc := cmd.(type) {
	case *execTestCmd:
		tc.cmd.Stdout, tc.cmd.Stderr = &out, &out
		if stdin != nil {
			tc.cmd.Stdin = stdin
		}
	case *serverTestCmd:
		tc.Stdout, tc.Stderr = &out, &out
		if stdin != nil {
			tc.Stdin = stdin
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", rt, err)
	}
	err = cmd.Wait()
	_ = cmd.SetupError()
	var code int
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", rt, err)
	}
	// The per-command route reports a program that could not be
	// executed through bwrap's output; only the status is compared.
	return out.String(), code
}

// TestServerTimeoutEndsTheTree: a command whose context times out is
// killed with everything it started (a tree that ignores SIGTERM, in its
// own sessions), Wait says SIGKILL within a bounded time, and the next
// command runs on the same server with nothing of it left.
func TestServerTimeoutEndsTheTree(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	// Builtins only, so that no process of the count's own is
	// counted: on a clean server, PID 1 and this bash.
	count := "n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo $n"
	base := f.run(t, wsWrite, count)
	if base.out != "2\n" {
		t.Fatalf("a clean server runs %q processes with the count, want 2", base.out)
	}
	sv := f.serverOf(wsWrite)
	token := fmt.Sprintf("7070.%d", os.Getpid()%1000)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	cmd, err := f.sb.Cmd(ctx, wsWrite, Spec{Argv: []string{"/bin/bash", "-c",
		"trap '' TERM HUP INT; setsid sleep " + token + " & (setsid sleep " + token + " &); nohup sleep " + token + " & sleep " + token}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = cmd.Run()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal != syscall.SIGKILL || cmd.srv == nil {
		t.Errorf("Run: %v (on a server %v)", err, cmd.srv != nil)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if n := hostProcesses(token); n != 0 {
		t.Errorf("%d processes outlived the timeout", n)
	}
	if r := f.run(t, wsWrite, count); r.out != base.out || f.serverOf(wsWrite) != sv {
		t.Errorf("after the timeout: %q processes (%q before), same server %v", r.out, base.out, f.serverOf(wsWrite) == sv)
	}
}

// serverProcess returns the host's pid of sv's server: the process below
// sv's bwrap that runs kz as the server.
func serverProcess(t *testing.T, sv *server) int {
	t.Helper()
	bw := sv.bwrap.Process.Pid
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(b, []byte("/proc/self/fd/4\x00"+serverArg)) {
			continue
		}
		// Its parent, or its parent's parent, is sv's bwrap.
		for p, i := pid, 0; i < 3 && p > 1; i++ {
			if p = parentOf(p); p == bw {
				return pid
			}
		}
	}
	t.Fatal("the server's process was not found")
	return 0
}

func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	f := strings.Fields(string(rest))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// TestServerCrashes: a server that dies between commands, one killed
// while its command runs, and one that hangs (stopped) when its command
// must be killed are never used again: the command in flight ends (with
// everything it started), the next command gets a new server or a clear
// error, and no command runs unconfined (.git/config stays unwritten).
func TestServerCrashes(t *testing.T) {
	f := newRouteFixture(t, viaServer)
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	attack := "{ echo pwned >> .git/config; } 2>/dev/null; echo ran"
	next := func(t *testing.T, old *server) {
		t.Helper()
		// The first command after the crash may run under its own bwrap
		// or fail with an error that names the server (never confined
		// less); the one after it must run on a new server.
		for i := range 2 {
			cmd, err := f.sb.Cmd(t.Context(), wsWrite, Spec{Argv: []string{"/bin/bash", "-c", attack}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err = cmd.Run()
			if cmd.srv != nil && cmd.srv.sv == old {
				t.Fatal("a command ran on the dead server")
			}
			if err == nil && out.String() == "ran\n" && cmd.srv != nil {
				break
			}
			if i == 0 && err == nil && out.String() == "ran\n" {
				continue
			}
			if i == 1 || err == nil || !strings.Contains(err.Error(), "sandbox server") {
				t.Fatalf("%d: %v %q on a server %v", i, err, out.String(), cmd.srv != nil)
			}
		}
		if strings.Contains(readFile(t, filepath.Join(f.ws, ".git/config")), "pwned") {
			t.Fatal(".git/config written")
		}
		waitGone(t, f, old)
	}
	t.Run("between commands", func(t *testing.T) {
		f.run(t, wsWrite, "true")
		old := f.serverOf(wsWrite)
		if err := syscall.Kill(serverProcess(t, old), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		next(t, old)
	})
	t.Run("during a command", func(t *testing.T) {
		f.run(t, wsWrite, "true")
		old := f.serverOf(wsWrite)
		token := fmt.Sprintf("7171.%d", os.Getpid()%1000)
		cmd, err := f.sb.Cmd(t.Context(), wsWrite, Spec{Argv: []string{"/bin/bash", "-c", "setsid sleep " + token + " & sleep " + token}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil || cmd.srv == nil {
			t.Fatalf("%v on a server %v", err, cmd.srv != nil)
		}
		for hostProcesses(token) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		if err := syscall.Kill(serverProcess(t, old), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); cmd.ExitCode() != 137 {
			t.Errorf("Wait: %v, status %d", err, cmd.ExitCode())
		}
		if n := hostProcesses(token); n != 0 {
			t.Errorf("%d processes outlived the server", n)
		}
		next(t, old)
	})
	t.Run("hangs", func(t *testing.T) {
		f.run(t, wsWrite, "true")
		old := f.serverOf(wsWrite)
		token := fmt.Sprintf("7272.%d", os.Getpid()%1000)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cmd, err := f.sb.Cmd(ctx, wsWrite, Spec{Argv: []string{"/bin/bash", "-c", "sleep " + token}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil || cmd.srv == nil {
			t.Fatalf("%v on a server %v", err, cmd.srv != nil)
		}
		for hostProcesses(token) < 1 {
			time.Sleep(10 * time.Millisecond)
		}
		pid := serverProcess(t, old)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cancel()
		if err := cmd.Wait(); cmd.ExitCode() != 137 {
			t.Errorf("Wait: %v, status %d", err, cmd.ExitCode())
		}
		if d := time.Since(start); d > waitDelay+10*time.Second {
			t.Errorf("the kill took %s", d)
		}
		next(t, old)
		if n := hostProcesses(token); n != 0 {
			t.Errorf("%d processes outlived the hung server", n)
		}
	})
}

// TestServerManyCommandsAtOnce: goroutines run commands of two
// confinements at once, some cancelled in their middle and signalled
// while Wait runs; each gets its own output and status, none reaches a
// protected path; then Close comes while commands are still starting and
// running: every Wait returns, no process of the session and no goroutine
// is left. Meant for -race.
func TestServerManyCommandsAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newRouteFixture(t, viaServer)
	gitDirLayout(t, filepath.Join(f.ws, ".git"))
	var wg sync.WaitGroup
	var onServer sync.Map
	for g := range 4 {
		wg.Go(func() {
			for i := range 8 {
				conf := []engine.Confinement{wsWrite, readOnly}[(g+i)%2]
				ctx, cancel := context.WithCancel(t.Context())
				want := fmt.Sprintf("g%d-%d", g, i)
				cmd, err := f.sb.Cmd(ctx, conf, Spec{Argv: []string{"/bin/bash", "-c",
					"{ echo pwned >> .git/config; } 2>/dev/null; echo " + want + "; [ " + strconv.Itoa(i%3) + " = 2 ] && sleep 30; exit " + strconv.Itoa(i%5)}})
				if err != nil {
					cancel()
					t.Error(err)
					return
				}
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Start(); err != nil {
					cancel()
					t.Error(err)
					return
				}
				if cmd.srv != nil {
					onServer.Store(want, true)
				}
				if i%3 == 2 {
					// Signals race Wait; the cancel ends it.
					go func() {
						time.Sleep(50 * time.Millisecond)
						_ = cmd.Signal(syscall.SIGCONT)
						cancel()
					}()
				}
				err = cmd.Wait()
				cancel()
				switch {
				case i%3 == 2:
					if cmd.ExitCode() != 137 {
						t.Errorf("%s: cancelled, status %d (%v)", want, cmd.ExitCode(), err)
					}
				case out.String() != want+"\n" || cmd.ExitCode() != i%5:
					t.Errorf("%s: %q, status %d (%v)", want, out.String(), cmd.ExitCode(), err)
				}
			}
		})
	}
	wg.Wait()
	n := 0
	onServer.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Error("no command ran on a server")
	}
	if strings.Contains(readFile(t, filepath.Join(f.ws, ".git/config")), "pwned") {
		t.Error(".git/config written")
	}

	// Close in the middle of commands starting and running. Close ends
	// the commands on servers; those that found their server busy run
	// under their own bwrap, which only their caller's context ends
	// (Close leaves Command's commands to their callers).
	token := fmt.Sprintf("7373.%d", os.Getpid()%1000)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var serverRuns, serverWaits int
	for g := range 6 {
		wg.Go(func() {
			conf := []engine.Confinement{wsWrite, readOnly, wsWriteNt}[g%3]
			cmd, err := f.sb.Cmd(ctx, conf, Spec{Argv: []string{"/bin/bash", "-c", "setsid sleep " + token + " & sleep " + token}})
			if err != nil {
				return // closed before Cmd
			}
			if err := cmd.Start(); err != nil {
				_ = cmd.SetupError()
				return // closed before Start
			}
			if cmd.srv != nil {
				mu.Lock()
				serverRuns++
				mu.Unlock()
			}
			_ = cmd.Wait()
			_ = cmd.SetupError()
			if cmd.srv != nil {
				mu.Lock()
				serverWaits++
				mu.Unlock()
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	if err := f.sb.Close(); err != nil {
		t.Fatal(err)
	}
	// Every command that was on a server has ended, without its context.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		runs, waits := serverRuns, serverWaits
		mu.Unlock()
		if runs == waits {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d commands on servers still running after Close", runs-waits, runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("commands still running 30 s after their context ended")
	}
	deadline = time.Now().Add(5 * time.Second)
	for (hostProcesses(token) != 0 || len(f.sessionProcesses()) != 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := hostProcesses(token); n != 0 {
		t.Errorf("%d processes left: %s", n, describeProcesses(token))
	}
	if ps := f.sessionProcesses(); len(ps) != 0 {
		t.Errorf("left after Close: %q", ps)
	}
}

// describeProcesses lists the host's processes whose command line holds
// token, with their parents, for a failure's message.
func describeProcesses(token string) string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(token)) {
			continue
		}
		line := fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		for p, i := parentOf(pid), 0; p > 1 && i < 4; p, i = parentOf(p), i+1 {
			pb, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			line += fmt.Sprintf(" <- %d %q", p, bytes.ReplaceAll(pb, []byte{0}, []byte{' '}))
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}
