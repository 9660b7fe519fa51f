package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
)

// Pipes are the stdout and stderr of a child whose output kz reads until
// it ends, made so that kz can let go of them before the last process
// that holds them has closed them (Release): an agent CLI's descriptors
// close only once the kernel has given back its memory (Tree.Stop).
// os/exec's own pipes cannot be let go of that way: Wait waits for the
// copy of a stderr writer until the pipe closes, or WaitDelay passes.
//
// They are made before the child starts (NewPipes), the child's ends
// closed in kz after (Started), Stdout read until EOF or Release, and
// Close called once the child is reaped, before what stderr was copied
// into is read.
type Pipes struct {
	stdout *releasable
	stderr *releasable
	errOut io.Writer
	// theirs are the child's ends, closed in kz once it has started.
	theirs []*os.File
	// copied is closed when the copy of stderr has ended.
	copied chan struct{}
}

// NewPipes gives cmd a stdout kz reads from Stdout and a stderr copied
// into errOut once the child has started.
func NewPipes(cmd *exec.Cmd, errOut io.Writer) (*Pipes, error) {
	or, ow, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		_ = or.Close()
		_ = ow.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	// Files, so os/exec hands them to the child as they are (blocking
	// on its side) and starts no copy of its own.
	cmd.Stdout, cmd.Stderr = ow, ew
	return &Pipes{stdout: &releasable{f: or}, stderr: &releasable{f: er}, errOut: errOut,
		theirs: []*os.File{ow, ew}, copied: make(chan struct{})}, nil
}

// Stdout reads the child's stdout; one reader at a time.
func (p *Pipes) Stdout() io.Reader { return p.stdout }

// Started closes the child's ends in kz; it is called after cmd.Start
// with its error. When the child started, stderr is copied from then on;
// when it did not, kz's ends are closed too.
func (p *Pipes) Started(startErr error) {
	for _, f := range p.theirs {
		_ = f.Close()
	}
	if startErr != nil {
		_ = p.stdout.f.Close()
		_ = p.stderr.f.Close()
		close(p.copied)
		return
	}
	go func() {
		defer close(p.copied)
		_, _ = io.Copy(p.errOut, p.stderr)
	}()
}

// Release lets go of the output: reads of Stdout, and the copy of
// stderr, take what the pipe holds at that moment and then end (EOF)
// instead of waiting for more. It is for a child that writes no more,
// one that has begun to exit, say: what it wrote is all read.
func (p *Pipes) Release() {
	p.stdout.release()
	p.stderr.release()
}

// StderrLimit is the wait Close is given for a CLI's stderr once the CLI
// is reaped: a grandchild may keep the pipe open.
const StderrLimit = 2 * time.Second

// Close waits for the copy of stderr to reach its end, at most limit (a
// grandchild that keeps stderr open holds the end back as long as it
// lives) and releases it after that, then closes kz's ends.
func (p *Pipes) Close(limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-p.copied:
	case <-t.C:
		p.Release()
		<-p.copied
	}
	_ = p.stdout.f.Close()
	_ = p.stderr.f.Close()
}

// releasable reads a pipe until EOF, or, once released, until the pipe
// holds nothing more.
type releasable struct {
	f        *os.File
	released atomic.Bool
}

// release makes a read that waits return, and every read from then on
// take only what the pipe holds.
func (r *releasable) release() {
	r.released.Store(true)
	// A read already waiting returns with os.ErrDeadlineExceeded, which
	// Read takes for the signal to look at what is left.
	_ = r.f.SetReadDeadline(time.Now())
}

// Read implements io.Reader.
func (r *releasable) Read(b []byte) (int, error) {
	for {
		if r.released.Load() {
			if buffered(r.f) <= 0 {
				return 0, io.EOF
			}
			// The pipe holds data: the read returns it at once, so
			// the deadline release set may go.
			_ = r.f.SetReadDeadline(time.Time{})
		}
		n, err := r.f.Read(b)
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && r.released.Load() {
			continue
		}
		return n, err
	}
}
