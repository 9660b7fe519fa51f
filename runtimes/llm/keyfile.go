package llm

import (
	"fmt"
	"os"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// maxKeyFile bounds what is read from a key file: a key is a line, and a
// file named by mistake (a log, an image) must not be read whole.
const maxKeyFile = 4 << 10

// readKeyFile reads an API key from a file: its first line, trimmed. A
// missing, empty or oversized file, or one that others than its owner may
// read, is an auth error naming the file, so kz runtimes and a turn say
// what to fix.
func readKeyFile(path string) (string, error) {
	fail := func(format string, a ...any) (string, error) {
		return "", &engine.RuntimeError{Kind: engine.ErrAuth, Message: fmt.Sprintf("API key file %s: ", path) + fmt.Sprintf(format, a...)}
	}
	st, err := os.Stat(path)
	if err != nil {
		return fail("%v", err)
	}
	switch {
	case !st.Mode().IsRegular():
		return fail("not a regular file")
	case st.Mode().Perm()&0o077 != 0:
		return fail("others may read it (mode %v): chmod 600 %s", st.Mode().Perm(), path)
	case st.Size() > maxKeyFile:
		return fail("%d bytes is too large for a key", st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fail("%v", err)
	}
	key, _, _ := strings.Cut(string(b), "\n")
	if key = strings.TrimSpace(key); key == "" {
		return fail("empty")
	}
	return key, nil
}
