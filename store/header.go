package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// The first 100 bytes of an SQLite file are its header: a magic string,
// the page size, the number of pages and a few settings. Garbled, they make
// the whole file "not a database", although every page after them is
// intact. The values kz's databases use are known, and the rest can be
// read off the file, so salvage rebuilds the header on its copy of the file
// and reads the pages through it.

const sqliteMagic = "SQLite format 3\x00"

// hasMagic reports whether b starts like an SQLite database.
func hasMagic(b []byte) bool { return bytes.HasPrefix(b, []byte(sqliteMagic)) }

// repairHeader rewrites the header of the database file at path when its
// magic string is missing, and reports whether it did; a header that is
// fine but counts more pages than the file has gets the right count. The page size comes
// from the write-ahead log's header when there is one, else from the
// layout of the pages (see guessPageSize).
func repairHeader(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("repair header: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("repair header: %w", err)
	}
	if fi.Size() < 512 {
		return false, nil
	}
	hdr := make([]byte, 100)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return false, fmt.Errorf("repair header: %w", err)
	}
	if hasMagic(hdr) {
		return false, fitPageCount(f, hdr, fi.Size())
	}
	ps := walPageSize(path + "-wal")
	if ps == 0 {
		if ps = guessPageSize(f, fi.Size()); ps == 0 {
			return false, nil
		}
	}
	h := make([]byte, 100)
	copy(h, sqliteMagic)
	if ps == 65536 {
		binary.BigEndian.PutUint16(h[16:], 1)
	} else {
		binary.BigEndian.PutUint16(h[16:], uint16(ps))
	}
	h[18], h[19] = 2, 2 // write-ahead log, as kz keeps every database
	h[21], h[22], h[23] = 64, 32, 32
	binary.BigEndian.PutUint32(h[24:], 1)                    // change counter
	binary.BigEndian.PutUint32(h[28:], uint32(fi.Size()/ps)) // pages
	binary.BigEndian.PutUint32(h[40:], 1)                    // schema cookie
	binary.BigEndian.PutUint32(h[44:], 4)                    // schema format
	binary.BigEndian.PutUint32(h[56:], 1)                    // UTF-8
	binary.BigEndian.PutUint32(h[92:], 1)                    // valid for change 1
	binary.BigEndian.PutUint32(h[96:], 3046000)
	// The freelist is unknown: its pages are left out, which costs
	// nothing to a copy.
	if _, err := f.WriteAt(h, 0); err != nil {
		return false, fmt.Errorf("repair header: %w", err)
	}
	return true, nil
}

// fitPageCount lowers the page count in the header of a file cut short to
// the pages it has: SQLite refuses a file shorter than its header says,
// where every page that is there can still be read.
func fitPageCount(f *os.File, hdr []byte, size int64) error {
	ps := int64(binary.BigEndian.Uint16(hdr[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return nil
	}
	n := (size + ps - 1) / ps
	if int64(binary.BigEndian.Uint32(hdr[28:])) <= n {
		return nil
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(n))
	if _, err := f.WriteAt(b[:], 28); err != nil {
		return fmt.Errorf("repair header: %w", err)
	}
	return nil
}

// walPageSize reads the page size from a write-ahead log's header, or 0.
func walPageSize(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	var h [32]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return 0
	}
	if m := binary.BigEndian.Uint32(h[0:]); m != 0x377f0682 && m != 0x377f0683 {
		return 0
	}
	ps := int64(binary.BigEndian.Uint32(h[8:]))
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return 0
	}
	return ps
}

// guessPageSize finds the page size under which pages start with a b-tree
// page type (2, 5, 10 or 13), the one byte every table and index page
// begins with; page 1 has it after the header. A multiple of the real size
// lands on page starts too, and a fraction of it also inside pages, so the
// answer is the smallest size that scores about as well as the best. 0
// means none fits.
func guessPageSize(f *os.File, size int64) int64 {
	var b [1]byte
	scores := map[int64]float64{}
	bestScore := 0.0
	for ps := int64(512); ps <= 65536; ps *= 2 {
		n := size / ps
		if n < 2 {
			continue
		}
		// The first pages, one after another: pages sampled at a stride
		// would, for a small size, land only where a larger one starts.
		good, tried := 0, 0
		for p := int64(0); p < n && p < 512; p++ {
			off := p * ps
			if p == 0 {
				off = 100
			}
			if _, err := f.ReadAt(b[:], off); err != nil {
				break
			}
			tried++
			switch b[0] {
			case 2, 5, 10, 13:
				good++
			}
		}
		if tried > 0 {
			scores[ps] = float64(good) / float64(tried)
			bestScore = max(bestScore, scores[ps])
		}
	}
	if bestScore < 0.3 {
		return 0
	}
	for ps := int64(512); ps <= 65536; ps *= 2 {
		if sc, ok := scores[ps]; ok && sc >= 0.85*bestScore {
			return ps
		}
	}
	return 0
}
