package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// WriteHeld returns the inode numbers of the files that a live descendant
// of process root (root itself left out) maps shared and writable, or
// holds open for writing: what a write may have changed without inotify
// saying so yet. A write through a shared mapping is reported to no
// watch; only the close of the file's last reference is (IN_CLOSE_WRITE),
// which comes when the process unmaps the file and closes it, or exits.
// So once no live process of kz's holds a file so, every write of its
// descendants to it has been reported, and a watcher that saw every event
// names every file they changed (checkpoint.Tracker's turn end relies on
// this).
//
// ok is false when /proc cannot tell: no list of children (a kernel
// without CONFIG_PROC_CHILDREN), or a live process whose mappings or
// descriptors kz may not read. Inode numbers are not qualified by their
// device: a caller that looks them up among one file system's files may
// find one that another file system's file shares, and then looks at a
// file more, never at one fewer.
//
// The descendants are found through /proc/PID/task/*/children, so a
// process that left the tree (reparented to init) is not seen; processes
// in a sandbox with a PID namespace of its own never leave it.
func WriteHeld(root int) (inodes []uint64, ok bool) {
	return writeHeld(procFS, root)
}

func writeHeld(procDir string, root int) ([]uint64, bool) {
	var inodes []uint64
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		threads, err := threadDirs(procDir, pid)
		if err != nil {
			// A process gone since its parent listed it holds nothing.
			if pid != root && finished(fmt.Sprintf("%s/%d", procDir, pid)) {
				continue
			}
			return nil, false
		}
		kids, err := childrenOfThreads(threads)
		if err != nil {
			if pid != root && ended(threads) {
				continue
			}
			return nil, false
		}
		for _, k := range kids {
			if !seen[k] {
				seen[k] = true
				queue = append(queue, k)
			}
		}
		if pid == root {
			continue
		}
		held, err := heldBy(threads)
		if err != nil {
			if ended(threads) {
				continue
			}
			return nil, false
		}
		inodes = append(inodes, held...)
	}
	return inodes, true
}

// threadDirs lists the /proc directories of the threads of process pid.
func threadDirs(procDir string, pid int) ([]string, error) {
	taskDir := fmt.Sprintf("%s/%d/task", procDir, pid)
	tasks, err := os.ReadDir(taskDir)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	dirs := make([]string, len(tasks))
	for i, task := range tasks {
		dirs[i] = taskDir + "/" + task.Name()
	}
	return dirs, nil
}

// childrenOfThreads lists the children of the threads whose /proc
// directories are given. A thread that is still there but has no children
// file is an error (the kernel cannot list children), as is a children
// file that cannot be read; the children of the other threads are listed
// all the same.
func childrenOfThreads(threads []string) ([]int, error) {
	var out []int
	var first error
	for _, dir := range threads {
		b, err := os.ReadFile(dir + "/children")
		if errors.Is(err, fs.ErrNotExist) {
			// The thread has ended since the listing, or the kernel has
			// no children files: the thread's own directory tells which.
			if _, serr := os.Stat(dir); serr == nil && first == nil {
				first = fmt.Errorf("no children file for thread %s: %w", dir, err)
			}
			continue
		}
		if err != nil {
			if first == nil {
				first = fmt.Errorf("read children: %w", err)
			}
			continue
		}
		for _, f := range bytes.Fields(b) {
			if child, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, child)
			}
		}
	}
	return out, first
}

// heldBy returns the inodes a process, given by its threads' /proc
// directories, maps shared and writable or has open for writing. They are
// read through one of its threads that has not ended: a process whose
// first thread has exited while others run is a zombie by its own stat
// and lists no mappings, yet its other threads run its code. A process
// whose every thread has ended holds nothing.
func heldBy(threads []string) ([]uint64, error) {
	i := slices.IndexFunc(threads, func(d string) bool { return !finished(d) })
	if i < 0 {
		return nil, nil
	}
	inodes, err := sharedWritable(threads[i] + "/maps")
	if err != nil {
		return nil, err
	}
	open, err := openForWrite(threads[i] + "/fd")
	if err != nil {
		return nil, err
	}
	return append(inodes, open...), nil
}

// sharedWritable returns the inodes of the shared, writable file mappings
// a maps file lists ("rw-s" or "-w-s" and a non-zero inode).
func sharedWritable(path string) ([]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	var out []uint64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// address perms offset dev inode [path]
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || len(f[1]) < 4 || f[1][1] != 'w' || f[1][3] != 's' {
			continue
		}
		ino, err := strconv.ParseUint(string(f[4]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mappings: bad inode %q", f[4])
		}
		if ino != 0 {
			out = append(out, ino)
		}
	}
	return out, sc.Err()
}

// openForWrite returns the inodes of the regular files a process's fd
// directory holds open for writing. The permission bits of each link are
// the descriptor's access mode (the kernel sets the owner's write bit for
// a descriptor open for writing), so only those are followed.
func openForWrite(dir string) ([]uint64, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open descriptors: %w", err)
	}
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list descriptors: %w", err)
	}
	dfd := int(d.Fd())
	var out []uint64
	var st unix.Stat_t
	for _, name := range names {
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				continue // closed since the listing
			}
			return nil, fmt.Errorf("descriptor %s: %w", name, err)
		}
		if st.Mode&unix.S_IWUSR == 0 {
			continue
		}
		if err := unix.Fstatat(dfd, name, &st, 0); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				continue
			}
			return nil, fmt.Errorf("descriptor %s: %w", name, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			out = append(out, st.Ino)
		}
	}
	return out, nil
}

// finished reports whether the process or thread whose /proc directory is
// dir has ended: gone, or a zombie, whose mappings and descriptors are
// released.
func finished(dir string) bool {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
	}
	f := statFields(b)
	return len(f) > 0 && (f[0][0] == 'Z' || f[0][0] == 'X')
}

// ended reports whether every thread, given by its /proc directory, has
// ended (finished): a process that ended while it was read.
func ended(threads []string) bool {
	return !slices.ContainsFunc(threads, func(d string) bool { return !finished(d) })
}
