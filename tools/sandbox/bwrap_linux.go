//go:build linux

package sandbox

// How a profile becomes bwrap's arguments. The order of the mounts
// matters, since a later mount covers an earlier one: the read-only root,
// a fresh /dev and /proc, the private /tmp; then the writable directories;
// then the read-only protected paths inside them; then the Git carve-out;
// last the hidden paths, so that nothing mounted before uncovers them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/permission"
)

// daemonSockets are the sockets of daemons that would run anything a
// command asks for (a container with the host's root mounted, a systemd
// unit): a Unix socket in the file system is reachable from any network
// namespace, so they are hidden.
var daemonSockets = []string{
	"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock",
	"/run/crio/crio.sock", "/run/buildkit/buildkitd.sock", "/run/dbus/system_bus_socket", "/run/systemd/private",
	"/run/snapd.socket", "/run/snapd-snap.socket", "/run/libvirt/libvirt-sock", "/var/snap/lxd/common/lxd/unix.socket",
	"/var/lib/lxd/unix.socket", "/var/lib/incus/unix.socket",
}

// argsViaFD is the size of bwrap's arguments past which they are passed
// through a memfd (--args) rather than the command line, whose length the
// kernel bounds.
const argsViaFD = 64 << 10

func (s *Sandbox) bwrapCommand(ctx context.Context, c engine.Confinement, spec Spec, env []string) (*exec.Cmd, *statusPipe, error) {
	args := namespaceArgs(c.Network || spec.KeepNetwork, s.status.disableUserns)
	args = append(args, fixedMounts(s.tmp, s.shm)...)
	plan, err := s.plan(ctx, c, spec)
	if err != nil {
		return nil, nil, err
	}
	args = append(args, plan...)
	args = append(args, "--chdir", spec.Dir)

	sp, err := newStatusPipe(parseBwrapStatus)
	if err != nil {
		return nil, nil, err
	}
	extra := []*os.File{sp.w}
	args = append(args, "--json-status-fd", "3")
	if n := argsLen(args); n > argsViaFD {
		if sp.args, err = memfdArgs(args); err != nil {
			sp.close()
			return nil, nil, err
		}
		extra = append(extra, sp.args)
		args = []string{"--args", "4"}
	}
	args = append(args, "--")
	args = append(args, spec.Argv...)
	cmd := exec.CommandContext(ctx, s.status.Bwrap, args...)
	cmd.Env = env
	cmd.ExtraFiles = extra
	return cmd, sp, nil
}

// fixedMounts are the mounts of every command: the host's root
// read-only; a fresh /dev with the usual devices, read-only but for
// /dev/shm, which is the session's like /tmp; a /proc of the command's own
// PID namespace; the private /tmp.
func fixedMounts(tmp, shm string) []string {
	return []string{"--ro-bind", "/", "/", "--dev", "/dev", "--bind", shm, "/dev/shm", "--remount-ro", "/dev",
		"--proc", "/proc", "--bind", tmp, "/tmp"}
}

// plan returns the mounts of one command after the fixed ones.
func (s *Sandbox) plan(ctx context.Context, c engine.Confinement, spec Spec) ([]string, error) {
	var args []string
	ws := s.pol.Workspace
	write := c.Profile == engine.ProfileWorkspaceWrite
	visible := []string{ws}
	var roots []string
	if write {
		roots = append([]string{ws}, s.pol.Writable...)
		for _, r := range roots {
			args = append(args, "--bind", r, r)
		}
		for _, d := range spec.ExtraWritable {
			args = append(args, "--bind", d, d)
		}
		visible = append(visible, s.pol.Writable...)
		visible = append(visible, spec.ExtraWritable...)
	} else if within("/tmp", ws) {
		// The private /tmp covers the host's; a workspace there must be
		// put back, read-only.
		args = append(args, "--ro-bind", ws, ws)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	searched := []string{ws}
	if write {
		searched = roots
	}
	var marks []mark
	for _, r := range searched {
		t := s.trees[r]
		if t == nil {
			t = s.newTree(r)
			s.trees[r] = t
		}
		f, err := t.search(ctx, maxDirs)
		if errors.Is(err, errTooLarge) {
			what := "every .git, protected path and hard-linked file in it, so a command that may write it cannot be confined"
			if !write {
				what = "every credential file in it, so they cannot be hidden"
			}
			return nil, fmt.Errorf("sandbox: %s has more than %d directories: kz cannot find %s; the command was not run", r, maxDirs, what)
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		marks = append(marks, f.marks...)
	}

	var readOnly, hidden []mark
	var gitDirs []string
	for _, m := range marks {
		switch {
		case m.kind == markCredential && !write:
			hidden = append(hidden, m)
		case !write || m.kind == markCredential:
		case m.kind == markGitDir:
			gitDirs = append(gitDirs, m.path)
		default:
			readOnly = append(readOnly, m)
		}
	}
	if write {
		for _, g := range gitDirs {
			if c.Git {
				readOnly = append(readOnly, gitReadOnly(g)...)
			} else {
				readOnly = append(readOnly, mark{kind: markGitDir, path: g, dir: true})
			}
		}
		if c.Git {
			// The workspace's repository may live outside it (a linked
			// worktree, or a workspace below the repository's top):
			// git writes there too.
			for _, g := range outsideGitDirs(ws) {
				args = append(args, "--bind", g, g)
				readOnly = append(readOnly, gitReadOnly(g)...)
			}
		}
	}
	hidden = append(hidden, s.hiddenPaths(visible, spec.ExtraWritable)...)
	readOnly, hidden = sortMarks(readOnly), sortMarks(hidden)
	if n := len(readOnly) + len(hidden); n > maxMounts {
		return nil, fmt.Errorf("sandbox: %d paths to protect or hide (more than %d): kz cannot confine this command; the command was not run", n, maxMounts)
	}
	for _, m := range readOnly {
		if m.kind == markCover && !m.exists() {
			// A hooks or info directory (or a config.worktree file) git
			// has not created yet: an empty read-only one stands in, so
			// none can be added.
			src := "/dev/null"
			if m.dir {
				src = s.empty
			}
			args = append(args, "--ro-bind", src, m.path)
			continue
		}
		args = append(args, "--ro-bind-try", m.path, m.path)
	}
	for _, m := range hidden {
		src := "/dev/null"
		if m.dir {
			src = s.empty
		}
		args = append(args, "--ro-bind", src, m.path)
	}
	return args, nil
}

// exists reports whether the mark's path exists now.
func (m mark) exists() bool {
	_, err := os.Lstat(m.path)
	return err == nil
}

// sortMarks orders marks so that a directory comes before what is below
// it, and drops duplicates and what lies below a directory already in
// the list: it is read-only or hidden with it (and a file cannot be
// mounted inside a hidden, empty directory).
func sortMarks(ms []mark) []mark {
	slices.SortFunc(ms, func(a, b mark) int { return strings.Compare(a.path, b.path) })
	out := ms[:0]
	var dirs []string
	for _, m := range ms {
		if slices.ContainsFunc(dirs, func(d string) bool { return within(d, m.path) }) {
			continue
		}
		out = append(out, m)
		if m.dir {
			dirs = append(dirs, m.path)
		}
	}
	return out
}

// gitReadOnly lists what stays read-only in git directory g when a
// command may write the repository: what makes git run code or read
// configuration (config, config.worktree, hooks/, info/, commondir), the
// same in each submodule's git directory below modules/, and in each
// linked worktree's directory below worktrees/. hooks/ and info/ are
// listed even when missing (markCover), so none can be created; so is
// config.worktree when the repository reads it (extensions.worktreeConfig),
// since a new one would be read like config.
func gitReadOnly(g string) []mark {
	var out []mark
	worktreeConfig := false
	add := func(dir string, top bool) {
		if top {
			b, _ := os.ReadFile(filepath.Join(dir, "config"))
			worktreeConfig = worktreeConfig || bytes.Contains(bytes.ToLower(b), []byte("worktreeconfig"))
		}
		for _, n := range []string{"config", "config.worktree", "commondir", "gitdir"} {
			p := filepath.Join(dir, n)
			if fi, err := os.Lstat(p); err == nil {
				out = append(out, mark{kind: markProtected, path: p, dir: fi.IsDir()})
			} else if n == "config" && top || n == "config.worktree" && worktreeConfig {
				// git reads a config it finds there: a missing one is
				// covered like hooks, so none can be added.
				out = append(out, mark{kind: markCover, path: p})
			}
		}
		if !top {
			return
		}
		for _, n := range []string{"hooks", "info"} {
			out = append(out, mark{kind: markCover, path: filepath.Join(dir, n), dir: true})
		}
	}
	add(g, true)
	// Submodules' git directories may nest (modules/a/modules/b); the
	// depth is bounded like the kernel bounds symlinks.
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil || depth > 40 {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if looksLikeGitDir(p) {
				add(p, true)
				walk(filepath.Join(p, "modules"), depth+1)
				continue
			}
			// Submodule names may hold slashes: modules/a/b.
			walk(p, depth+1)
		}
	}
	walk(filepath.Join(g, "modules"), 0)
	if ents, err := os.ReadDir(filepath.Join(g, "worktrees")); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				add(filepath.Join(g, "worktrees", e.Name()), false)
			}
		}
	}
	return out
}

// looksLikeGitDir reports a git directory: HEAD, objects/ and refs/.
func looksLikeGitDir(dir string) bool {
	for _, n := range []struct {
		name string
		dir  bool
	}{{"HEAD", false}, {"objects", true}, {"refs", true}} {
		fi, err := os.Lstat(filepath.Join(dir, n.name))
		if err != nil || fi.IsDir() != n.dir {
			return false
		}
	}
	return true
}

// outsideGitDirs returns the git directories of the workspace's repository
// that lie outside it: the directory a top-level .git file names and its
// common directory (a linked worktree), or the .git of a repository whose
// top is above the workspace.
func outsideGitDirs(ws string) []string {
	var dirs []string
	for d := ws; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			if d != ws {
				dirs = append(dirs, p)
			}
		case err == nil && fi.Mode().IsRegular():
			if g := gitdirOfFile(p); g != "" {
				dirs = append(dirs, g)
				if b, err := os.ReadFile(filepath.Join(g, "commondir")); err == nil {
					c := strings.TrimSpace(string(b))
					if !filepath.IsAbs(c) {
						c = filepath.Join(g, c)
					}
					if r, err := filepath.EvalSymlinks(c); err == nil {
						dirs = append(dirs, r)
					}
				}
			}
		case d != "/":
			continue
		}
		break
	}
	var out []string
	for _, g := range dirs {
		if !within(ws, g) && looksLikeGitDir(g) {
			out = append(out, g)
		}
	}
	return out
}

// hiddenPaths lists what every command is denied: the home's credentials,
// kz's own directories, the session's runtime directory and the daemons'
// sockets. A path under /tmp that no visible directory holds is left out:
// the private /tmp already covers it. Nothing in own (the command's
// ExtraWritable directories, an agent CLI's home) is hidden: the CLI must
// read its own login there, and what it reads the commands it runs could
// reach anyway.
func (s *Sandbox) hiddenPaths(visible, own []string) []mark {
	var cands []string
	for _, rel := range permission.HomeCredentialPaths() {
		cands = append(cands, filepath.Join(s.home, rel))
	}
	cands = append(cands, s.pol.Hidden...)
	if rd := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rd) {
		cands = append(cands, rd)
	}
	cands = append(cands, "/run/user/"+strconv.Itoa(os.Getuid()))
	cands = append(cands, daemonSockets...)
	var out []mark
	for _, p := range cands {
		// One lstat settles the common case (missing, or a plain file or
		// directory); only a symlink is resolved, to hide what it names.
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		r := p
		if fi.Mode()&os.ModeSymlink != 0 {
			if r, err = filepath.EvalSymlinks(p); err != nil {
				continue
			}
			if fi, err = os.Stat(r); err != nil {
				continue
			}
		}
		if slices.ContainsFunc(own, func(o string) bool { return within(o, p) || within(o, r) }) {
			continue
		}
		if within("/tmp", r) && !slices.ContainsFunc(visible, func(v string) bool { return within(v, r) }) {
			continue
		}
		out = append(out, mark{kind: markCredential, path: r, dir: fi.IsDir()})
	}
	return out
}

// parseBwrapStatus reads bwrap's --json-status-fd output: bwrap writes the
// command's "exit-code" only when the command was executed, so without it
// the sandbox failed before the command ran.
func parseBwrapStatus(b []byte) error {
	if bytes.Contains(b, []byte(`"exit-code"`)) {
		return nil
	}
	return errors.New("sandbox: bubblewrap could not set up the sandbox, so the command was not run (bwrap's message is in the output)")
}

func argsLen(args []string) int {
	n := 0
	for _, a := range args {
		n += len(a) + 1
	}
	return n
}

// memfdArgs writes args NUL-separated to an anonymous file for bwrap's
// --args.
func memfdArgs(args []string) (*os.File, error) {
	fd, err := unix.MemfdCreate("kz-bwrap-args", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: arguments file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "kz-bwrap-args")
	var b bytes.Buffer
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sandbox: arguments file: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sandbox: arguments file: %w", err)
	}
	return f, nil
}
