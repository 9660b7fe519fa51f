package imagetrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Drop unmaps the pages of kz's executable that are mapped read-only and
// were never written, and returns how many bytes of mappings it dropped
// (their pages were resident or not). See the package comment.
func Drop() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("image trim: %w", err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("image trim: %w", err)
	}
	var dropped int64
	for _, m := range cleanImageMappings(smaps, exe) {
		// The raw call: the range is an address read from smaps, which
		// no Go slice describes.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return dropped, fmt.Errorf("image trim: madvise %x-%x: %w", m.start, m.end, errno)
		}
		dropped += int64(m.end - m.start)
	}
	return dropped, nil
}

// mapping is one address range of /proc/self/smaps.
type mapping struct{ start, end uintptr }

// cleanImageMappings returns the mappings of the file exe that are
// private, not writable and hold no page of their own (Anonymous: 0 kB):
// every resident page of such a mapping is the page cache's, so dropping
// it loses nothing. A position-independent build's relocated read-only
// data is written at load and is left alone, as is anything writable.
func cleanImageMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			cur = nil
			// The path is the rest of the line after five fields; it may
			// hold spaces. An executable replaced on disk is left alone.
			path := line
			for range 5 {
				path = strings.TrimLeft(path, " ")
				_, path, _ = strings.Cut(path, " ")
			}
			path = strings.TrimLeft(path, " ")
			if path != exe || strings.HasSuffix(path, " (deleted)") || len(f[1]) != 4 || f[1][1] == 'w' || f[1][3] != 'p' {
				continue
			}
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || end <= start {
				continue
			}
			out = append(out, mapping{uintptr(start), uintptr(end)})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil && len(f) >= 2 && f[0] == "Anonymous:" && f[1] != "0" {
			out = out[:len(out)-1]
			cur = nil
		}
	}
	return out
}
