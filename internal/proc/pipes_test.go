//go:build linux

package proc

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Released, the pipes give what the child wrote and then end, though the
// child still holds them: stdout what it holds unread, the copy of
// stderr all of it, and a read that waited for more returns.
func TestPipesReleaseReadsWhatIsLeft(t *testing.T) {
	defer goleak.VerifyNone(t)
	var errOut strings.Builder
	// stderr first: once stdout holds its bytes, stderr's are written
	// too, and Release must give them, whether copied yet or not.
	p := startPiped(t, "echo err >&2; printf 'one\\ntwo\\nthree'; exec sleep 61.4", &errOut)
	deadline := time.Now().Add(5 * time.Second)
	for buffered(p.stdout.f) < len("one\ntwo\nthree") {
		if time.Now().After(deadline) {
			t.Fatal("the child's output never came")
		}
		time.Sleep(time.Millisecond)
	}
	p.Release()
	got, err := io.ReadAll(p.Stdout())
	if err != nil || string(got) != "one\ntwo\nthree" {
		t.Fatalf("released stdout read %q, %v; want all the child wrote", got, err)
	}
	p.Close(5 * time.Second)
	if errOut.String() != "err\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}

// A read that waits on an empty pipe returns at Release, and Close does
// not wait for a stderr the child keeps open beyond its limit.
func TestPipesReleaseEndsAWaitingRead(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := startPiped(t, "echo ready; exec sleep 61.5", io.Discard)
	r := bufio.NewReader(p.Stdout())
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := r.ReadString('\n')
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the read ended before Release: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	p.Release()
	if err := <-ended; err != io.EOF {
		t.Errorf("the waiting read ended with %v, want EOF", err)
	}
	p.Close(10 * time.Millisecond)
}

// A child that fails to start leaves no descriptor and no goroutine.
func TestPipesOfAChildThatDidNotStart(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := exec.Command("/nonexistent/kz-no-such-program")
	p, err := NewPipes(cmd, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	p.Started(err)
	if err == nil {
		t.Fatal("a missing program started")
	}
	p.Close(time.Second)
	if _, err := p.Stdout().Read(make([]byte, 1)); err == nil {
		t.Error("stdout is still open")
	}
}

// startPiped starts the shell script with Pipes, its stderr copied into
// errOut; the test's end kills it.
func startPiped(t *testing.T, script string, errOut io.Writer) *Pipes {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	p, err := NewPipes(cmd, errOut)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	p.Started(err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return p
}
