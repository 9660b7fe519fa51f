package patch

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"strings"
	"sync"
	"time"
)

// memFS is an in-memory FS for the corpus and benchmarks, where thousands
// of proposals run and temp directories would only measure the disk. It
// has no symbolic links, so its directory handles (memDir) are names; the
// swap tests use real directories.
type memFS struct {
	mu    sync.Mutex
	files map[string]memFile
	// dirs are directories made by Mkdir; the others exist while a file
	// is under them.
	dirs map[string]bool
}

type memFile struct {
	data []byte
	mode fs.FileMode
}

func newMemFS(files map[string][]byte) *memFS {
	m := &memFS{files: map[string]memFile{}, dirs: map[string]bool{}}
	for k, v := range files {
		m.files[k] = memFile{append([]byte(nil), v...), 0o644}
	}
	return m
}

type memInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

func (m *memFS) ReadFile(rel string, max int64) ([]byte, fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[rel]
	if !ok {
		return nil, nil, fs.ErrNotExist
	}
	if int64(len(f.data)) > max {
		return nil, nil, fmt.Errorf("%s: too large", rel)
	}
	return append([]byte(nil), f.data...), memInfo{rel, int64(len(f.data)), f.mode}, nil
}

func (m *memFS) isDir(rel string) bool {
	if rel == "." || m.dirs[rel] {
		return true
	}
	for k := range m.files {
		if strings.HasPrefix(k, rel+"/") {
			return true
		}
	}
	return false
}

func (m *memFS) Lstat(rel string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.files[rel]; ok {
		return memInfo{rel, int64(len(f.data)), f.mode}, nil
	}
	if rel == "." || m.isDir(rel) {
		return memInfo{rel, 0, fs.ModeDir | 0o755}, nil
	}
	return nil, fs.ErrNotExist
}

func (m *memFS) Resolve(rel string) (string, error) {
	if _, err := m.Lstat(rel); err != nil {
		return "", err
	}
	if rel == "." {
		return "/mem", nil
	}
	return "/mem/" + rel, nil
}

func (m *memFS) Rel(p string) (string, error) {
	if p == "/mem" {
		return ".", nil
	}
	r, ok := strings.CutPrefix(p, "/mem/")
	if !ok {
		return "", errors.New("outside")
	}
	return r, nil
}

// OpenRootDir implements DirFS.
func (m *memFS) OpenRootDir() (Dir, error) { return memDir{m: m, dir: "."}, nil }

// memDir is a directory of a memFS, named by its path.
type memDir struct {
	m   *memFS
	dir string
}

func (d memDir) path(name string) string {
	if d.dir == "." {
		return name
	}
	return d.dir + "/" + name
}

// id gives every path its own identity, stable while the path exists.
func memID(p string) FileID {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p))
	return FileID{Dev: 1, Ino: h.Sum64()}
}

func (d memDir) Stat() (Stat, error) {
	return Stat{Mode: fs.ModeDir | 0o755, Nlink: 2, ID: memID(d.dir)}, nil
}

func (d memDir) Lstat(name string) (Stat, error) {
	p := d.path(name)
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if f, ok := d.m.files[p]; ok {
		return Stat{Mode: f.mode, Size: int64(len(f.data)), Nlink: 1, ID: memID(p)}, nil
	}
	if d.m.isDir(p) {
		return Stat{Mode: fs.ModeDir | 0o755, Nlink: 2, ID: memID(p)}, nil
	}
	return Stat{}, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
}

func (d memDir) OpenDir(name string) (Dir, error) {
	st, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: d.path(name), Err: errors.New("not a directory")}
	}
	return memDir{m: d.m, dir: d.path(name)}, nil
}

func (d memDir) Mkdir(name string, _ fs.FileMode) error {
	if _, err := d.Lstat(name); err == nil {
		return &fs.PathError{Op: "mkdir", Path: d.path(name), Err: fs.ErrExist}
	}
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	d.m.dirs[d.path(name)] = true
	return nil
}

func (d memDir) ReadFile(name string, max int64) ([]byte, Stat, error) {
	st, err := d.Lstat(name)
	if err != nil {
		return nil, Stat{}, err
	}
	if err := checkRegular(name, st); err != nil {
		return nil, Stat{}, err
	}
	b, _, err := d.m.ReadFile(d.path(name), max)
	return b, st, err
}

func (d memDir) WriteTemp(name string, data []byte, mode fs.FileMode) (string, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	for i := 0; ; i++ {
		tmp := fmt.Sprintf("%s%016x", tempStem(name), i)
		if _, ok := d.m.files[d.path(tmp)]; !ok {
			d.m.files[d.path(tmp)] = memFile{append([]byte(nil), data...), mode}
			return tmp, nil
		}
	}
}

func (d memDir) Rename(from, to string) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	f, ok := d.m.files[d.path(from)]
	if !ok {
		return fs.ErrNotExist
	}
	delete(d.m.files, d.path(from))
	d.m.files[d.path(to)] = f
	return nil
}

func (d memDir) Remove(name string) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if _, ok := d.m.files[d.path(name)]; !ok {
		return fs.ErrNotExist
	}
	delete(d.m.files, d.path(name))
	return nil
}

func (d memDir) RemoveDir(name string) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	p := d.path(name)
	for k := range d.m.files {
		if strings.HasPrefix(k, p+"/") {
			return errors.New("directory not empty")
		}
	}
	delete(d.m.dirs, p)
	return nil
}

func (d memDir) Names() ([]string, error) {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	prefix := d.path("")
	if d.dir == "." {
		prefix = ""
	}
	seen := map[string]bool{}
	var out []string
	for k := range d.m.files {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			name, _, _ := strings.Cut(rest, "/")
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, nil
}

func (memDir) Sync() error  { return nil }
func (memDir) Close() error { return nil }
