package imagetrim

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestCleanImageMappings: only the executable's private, read-only
// mappings that hold no written page are dropped; its writable data,
// a relocated read-only part (written at load), shared mappings and
// other files are left.
func TestCleanImageMappings(t *testing.T) {
	smaps := `00400000-00c00000 r-xp 00000000 fd:01 1234 /usr/bin/kz
Size:               8192 kB
Rss:                5000 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00c00000-01000000 r--p 00800000 fd:01 1234 /usr/bin/kz
Size:               4096 kB
Anonymous:             0 kB
01000000-01100000 r--p 00c00000 fd:01 1234 /usr/bin/kz
Size:               1024 kB
Anonymous:            12 kB
01100000-01200000 rw-p 00d00000 fd:01 1234 /usr/bin/kz
Size:               1024 kB
Anonymous:           800 kB
01200000-01300000 rw-p 00000000 00:00 0
Anonymous:          1024 kB
7f0000000000-7f0000100000 r--s 00000000 fd:01 99 /usr/bin/kz
Anonymous:             0 kB
7f0000200000-7f0000300000 r-xp 00000000 fd:01 77 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000400000-7f0000500000 r--p 00000000 fd:01 1234 /usr/bin/kz (deleted)
Anonymous:             0 kB
7f0000600000-7f0000700000 r--p 00000000 fd:01 1234 /usr/bin/kz x
Anonymous:             0 kB
`
	got := cleanImageMappings([]byte(smaps), "/usr/bin/kz")
	want := []mapping{{0x400000, 0xc00000}, {0xc00000, 0x1000000}}
	// A path with a space is compared whole.
	if spaced := cleanImageMappings([]byte(smaps), "/usr/bin/kz x"); len(spaced) != 1 || spaced[0] != (mapping{0x7f0000600000, 0x7f0000700000}) {
		t.Errorf("for a path with a space: %x", spaced)
	}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %x, want %x", i, got[i], want[i])
		}
	}
}

// TestDropKeepsTheProgramWorking drops this test binary's clean pages and
// checks that fewer of them are resident and that its code and read-only
// data still work: what the next call touches is mapped back from the
// page cache.
func TestDropKeepsTheProgramWorking(t *testing.T) {
	before := imageRSS(t)
	n, err := Drop()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("Drop found no clean mapping of the executable")
	}
	after := imageRSS(t)
	if after >= before {
		t.Errorf("the executable's resident pages went from %d to %d kB", before, after)
	}
	// Code, read-only data (a regular expression's tables, strconv's),
	// the runtime's own tables (a stack trace reads pclntab) and a
	// garbage collection all work after the drop.
	re := regexp.MustCompile(`^(\d+)-(\w+)$`)
	m := re.FindStringSubmatch("42-kz")
	if len(m) != 3 || m[1] != "42" || m[2] != "kz" {
		t.Fatalf("regexp after Drop: %q", m)
	}
	if v, err := strconv.ParseFloat("3.25", 64); err != nil || v != 3.25 {
		t.Fatalf("ParseFloat after Drop: %v %v", v, err)
	}
	buf := make([]byte, 1<<16)
	if s := string(buf[:runtime.Stack(buf, true)]); !strings.Contains(s, "TestDropKeepsTheProgramWorking") {
		t.Fatalf("stack after Drop lacks this test:\n%s", s)
	}
	runtime.GC()
}

// imageRSS is the resident kB of this executable's mappings.
func imageRSS(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	total, in := 0, false
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && f[5] == exe
			continue
		}
		if in && len(f) >= 2 && f[0] == "Rss:" {
			kb, _ := strconv.Atoi(f[1])
			total += kb
		}
	}
	return total
}
