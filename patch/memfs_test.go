package patch

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"
)

// memFS is an in-memory FS for the corpus and benchmarks, where thousands
// of proposals run and temp directories would only measure the disk.
type memFS struct {
	mu    sync.Mutex
	files map[string]memFile
}

type memFile struct {
	data []byte
	mode fs.FileMode
}

func newMemFS(files map[string][]byte) *memFS {
	m := &memFS{files: map[string]memFile{}}
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

func (m *memFS) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.files[rel]; ok {
		perm = f.mode
	}
	m.files[rel] = memFile{append([]byte(nil), data...), perm}
	return nil
}

func (m *memFS) Remove(rel string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[rel]; !ok {
		return fs.ErrNotExist
	}
	delete(m.files, rel)
	return nil
}

func (m *memFS) Rename(o, n string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[o]
	if !ok {
		return fs.ErrNotExist
	}
	delete(m.files, o)
	m.files[n] = f
	return nil
}

func (m *memFS) isDir(rel string) bool {
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

func (m *memFS) MkdirAll(string, fs.FileMode) error { return nil }

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
