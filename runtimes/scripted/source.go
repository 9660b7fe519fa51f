package scripted

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// segment is where one turn's part of the script starts: the byte offset
// of the line after the header or the end_turn before it, and that line's
// number, for errors.
type segment struct {
	off  int64
	line int
}

// source opens the script's bytes from an offset, once per turn.
type source interface {
	open(off int64) (io.ReadCloser, error)
}

// fileSource is a script file. A turn reads its segment from the file
// again, and only if the file is still the one Load checked: a script
// edited while kz runs could otherwise play half-checked lines from the
// wrong offsets.
type fileSource struct {
	path string
	size int64
	mod  time.Time
}

func (s fileSource) open(off int64) (io.ReadCloser, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("open script: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && (fi.Size() != s.size || !fi.ModTime().Equal(s.mod)) {
		err = fmt.Errorf("%s changed since kz loaded it; start kz again to play the new script", s.path)
	}
	if err == nil {
		_, err = f.Seek(off, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open script: %w", err)
	}
	return f, nil
}

// memSource is a script held in memory (Parse of a reader).
type memSource []byte

func (s memSource) open(off int64) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(s[off:])), nil
}

// scanLines calls fn for each line of r that holds something: not blank,
// not a "//" comment. n is the line's number, counting the first line of
// r as first; next is the offset in r of the line after it; raw is the
// line trimmed of blanks, valid only during the call. fn stops the scan
// by returning stop or an error, which scanLines returns as it is. Read
// errors name file and, for a line over MaxLineBytes, the line.
func scanLines(r io.Reader, file string, first int, fn func(n int, next int64, raw []byte) (stop bool, err error)) error {
	var pos int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	// Every byte the scanner moves past is counted, so that pos is the
	// offset of the line after the one just returned.
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		pos += int64(adv)
		return adv, tok, err
	})
	n := first - 1
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 || bytes.HasPrefix(raw, []byte("//")) {
			continue
		}
		stop, err := fn(n, pos, raw)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes", file, n+1, MaxLineBytes)
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
