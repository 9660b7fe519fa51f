package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestClosedStdoutIsSilent runs kz as a process whose stdout is a pipe
// nobody reads (the reader of `kz sessions list | head -1` gone): the
// listing commands and the help end with exit 0 and nothing on stderr;
// kz -p says no "broken pipe" either, and exits 0 or, for a turn the
// closed output interrupted, 3.
func TestClosedStdoutIsSilent(t *testing.T) {
	t.Parallel()
	sb := newProcessSandbox(t)
	hello := script("hello.jsonl")
	for range 2 {
		if _, errOut, code := sb.kzProcess(nil, "-p", "hi", "--script", hello); code != 0 {
			t.Fatalf("seed session: exit %d: %s", code, errOut)
		}
	}
	for _, c := range []struct {
		args  []string
		codes []int
	}{
		{[]string{"sessions", "list"}, []int{0}},
		{[]string{"runtimes"}, []int{0}},
		{[]string{"runtimes", "--json"}, []int{0}},
		{[]string{"--help"}, []int{0}},
		{[]string{"version"}, []int{0}},
		{[]string{"-p", "hi", "--script", hello, "--output-format", "stream-json"}, []int{0, 3}},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Dir, cmd.Env = sb.workspace, sb.environ()
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &errb
		err = cmd.Run()
		_ = w.Close()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		okCode := false
		for _, want := range c.codes {
			okCode = okCode || code == want
		}
		if !okCode || strings.Contains(errb.String(), "broken pipe") || strings.Contains(errb.String(), "write") {
			t.Errorf("kz %v into a closed pipe: exit %d, stderr %q", c.args, code, errb.String())
		}
		if c.args[0] != "-p" && errb.Len() != 0 {
			t.Errorf("kz %v into a closed pipe wrote to stderr: %q", c.args, errb.String())
		}
	}
}
