//go:build linux

package proc

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizen-code/kz/internal/testfs"
)

// TestHeldHelper is the process the WriteHeld tests look at, when run by
// them: it holds KZ_HELD_FILE as KZ_HELD_ACTION says, prints "ready" and
// waits for its stdin to close. "child:ACTION" starts another helper
// doing ACTION and waits with it, so that the holder is a grandchild.
func TestHeldHelper(t *testing.T) {
	action, path := os.Getenv("KZ_HELD_ACTION"), os.Getenv("KZ_HELD_FILE")
	if action == "" {
		t.Skip("only run by the WriteHeld tests")
	}
	if inner, ok := strings.CutPrefix(action, "child:"); ok {
		cmd := heldHelper(inner, path)
		cmd.Stdin = os.Stdin
		out, err := cmd.StdoutPipe()
		if err != nil || cmd.Start() != nil {
			os.Exit(2)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		_, _ = os.Stdout.WriteString(line)
		_ = cmd.Wait()
		os.Exit(0)
	}
	var keep []any
	mapFile := func(flag, prot, share int) {
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			os.Exit(2)
		}
		m, err := syscall.Mmap(int(f.Fd()), 0, 4, prot, share)
		if err != nil {
			os.Exit(3)
		}
		if prot&syscall.PROT_WRITE != 0 {
			copy(m, "held")
		}
		// Only the mapping holds the file now.
		_ = f.Close()
		keep = append(keep, m)
	}
	switch action {
	case "map":
		mapFile(os.O_RDWR, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	case "map-private":
		mapFile(os.O_RDWR, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	case "map-read":
		mapFile(os.O_RDONLY, syscall.PROT_READ, syscall.MAP_SHARED)
	case "write-fd", "read-fd", "append-fd":
		flag := map[string]int{"write-fd": os.O_WRONLY, "read-fd": os.O_RDONLY, "append-fd": os.O_RDWR | os.O_APPEND}[action]
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			os.Exit(2)
		}
		keep = append(keep, f)
	default:
		os.Exit(4)
	}
	_, _ = os.Stdout.WriteString("ready\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = keep
	os.Exit(0)
}

func heldHelper(action, path string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeldHelper$")
	cmd.Env = append(os.Environ(), "KZ_HELD_ACTION="+action, "KZ_HELD_FILE="+path)
	return cmd
}

// startHolder starts a helper doing action on path and waits until it
// holds the file; closing the returned pipe lets it exit.
func startHolder(t testing.TB, action, path string) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd := heldHelper(action, path)
	in, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = in
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = in.Close()
	t.Cleanup(func() { _ = w.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper %s: %q", action, line)
	}
	return cmd, w
}

// WriteHeld names a file that a live descendant maps shared and writable
// or holds open for writing, a child's or a grandchild's, and no file
// only read or mapped privately; once the holder has exited, or is a
// zombie, the file is no longer held.
func TestWriteHeldSeesEveryWritingHolder(t *testing.T) {
	for _, c := range []struct {
		action string
		held   bool
	}{
		{"map", true}, {"write-fd", true}, {"append-fd", true}, {"child:map", true}, {"child:write-fd", true},
		{"map-private", false}, {"map-read", false}, {"read-fd", false}, {"child:read-fd", false},
	} {
		t.Run(c.action, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
				t.Fatal(err)
			}
			want := testfs.Ino(t, path)
			cmd, release := startHolder(t, c.action, path)
			inodes, ok := WriteHeld(os.Getpid())
			if !ok {
				t.Fatal("WriteHeld cannot tell")
			}
			if got := slices.Contains(inodes, want); got != c.held {
				t.Errorf("held %v, want %v (inodes %v)", got, c.held, inodes)
			}
			// A zombie holds nothing: its mappings and descriptors are
			// gone before its parent reaps it.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for !Exited(cmd.Process.Pid) {
				time.Sleep(time.Millisecond)
			}
			inodes, ok = WriteHeld(os.Getpid())
			if !ok || slices.Contains(inodes, want) {
				t.Errorf("after the holder died: ok %v, held %v", ok, slices.Contains(inodes, want))
			}
			_ = release.Close()
		})
	}
}

// fakeProc writes a /proc of the given files under a temporary directory.
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WriteHeld reads the maps of each descendant for shared writable file
// mappings, through a thread that has not ended, and cannot tell when the
// kernel lists no children or a live process's mappings cannot be read;
// a child gone, or whose every thread has ended, holds nothing.
func TestWriteHeldReadsProc(t *testing.T) {
	const maps = "7f00-7f01 rw-s 00000000 08:01 42 /ws/a\n" +
		"7f01-7f02 rw-p 00000000 08:01 43 /ws/b\n" +
		"7f02-7f03 r--s 00000000 08:01 44 /ws/c\n" +
		"7f03-7f04 -w-s 00000000 08:01 45 /ws/d (deleted)\n" +
		"7f04-7f05 rw-s 00000000 00:00 0 \n" +
		"7ffd-7ffe rw-p 00000000 00:00 0 [stack]\n"
	dir := fakeProc(t, map[string]string{
		"100/task/100/children": "200 300 ",
		"100/task/101/children": "400 500\n",
		"200/task/200/children": "",
		"200/task/200/stat":     "200 (a (b) c) S 100",
		"200/task/200/maps":     maps,
		"200/task/200/fd/":      "",
		// 400 has ended: its thread is a zombie.
		"400/task/400/children": "",
		"400/task/400/stat":     "400 (z) Z 100",
		// 500's first thread has exited; its second still runs.
		"500/task/500/children": "",
		"500/task/500/stat":     "500 (t) Z 100",
		"500/task/501/children": "",
		"500/task/501/stat":     "501 (t) S 100",
		"500/task/501/maps":     "7f00-7f01 rw-s 00000000 08:01 46 /ws/e\n",
		"500/task/501/fd/":      "",
	})
	got, ok := writeHeld(dir, 100)
	slices.Sort(got)
	if !ok || !slices.Equal(got, []uint64{42, 45, 46}) {
		t.Errorf("writeHeld = %v, %v; want [42 45 46], true", got, ok)
	}

	noChildren := fakeProc(t, map[string]string{"100/task/100/stat": "100 (kz) S 1"})
	if _, ok := writeHeld(noChildren, 100); ok {
		t.Error("no children files, and writeHeld could tell")
	}

	unreadable := fakeProc(t, map[string]string{
		"100/task/100/children": "200",
		"200/task/200/children": "",
		"200/task/200/stat":     "200 (x) S 100",
		"200/task/200/maps/":    "", // a directory: reading it fails
		"200/task/200/fd/":      "",
	})
	if _, ok := writeHeld(unreadable, 100); ok {
		t.Error("a live process's mappings could not be read, and writeHeld could tell")
	}
	// The same process ended holds nothing.
	if err := os.WriteFile(filepath.Join(unreadable, "200/task/200/stat"), []byte("200 (x) Z 100"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := writeHeld(unreadable, 100); !ok || len(got) != 0 {
		t.Errorf("an ended process: writeHeld = %v, %v; want nothing, true", got, ok)
	}
}
