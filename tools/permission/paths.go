package permission

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinkHops bounds symlink resolution, as the kernel does (ELOOP).
const maxLinkHops = 40

// hasControl reports NUL, control characters or DEL in a path.
func hasControl(p string) bool {
	return strings.ContainsFunc(p, func(c rune) bool { return c < 0x20 || c == 0x7f })
}

// expandHome turns a leading "~" into home.
func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// resolvePath resolves p (absolute, "~"-relative or relative to base) the
// way the kernel would: component by component, following every symlink
// that exists, so that `link/..` lands where the link points and not where
// lexical cleaning would put it. Components that do not exist are joined
// lexically.
func resolvePath(base, p, home string) (string, error) {
	p = expandHome(p, home)
	cur := "/"
	if !filepath.IsAbs(p) {
		// base is already resolved: start there instead of walking it again.
		cur = base
	}
	comps := strings.Split(p, "/")
	hops := 0
	missing := false
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				missing = true
				cur = next
				continue
			}
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", fmt.Errorf("resolve %s: too many symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		comps = append(strings.Split(target, "/"), comps...)
	}
	return cur, nil
}

// within reports whether p is root or below it, by path components
// (never by string prefix: /proj-evil is not within /proj).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// protection says why writing a resolved path is refused, or "".
// credential reports what a model must not read without a person's yes
// (secret): the reason is then the secret's.
func (e *eval) protection(r string) (reason string, credential bool) {
	if why := e.g.secret(r); why != "" {
		return why, true
	}
	// Compared case-insensitively: on case-insensitive file systems
	// (macOS, Windows) `.GIT/config` is `.git/config`.
	comps := strings.Split(strings.ToLower(strings.Trim(r, "/")), "/")
	base := comps[len(comps)-1]
	for _, c := range comps {
		switch {
		case c == ".git":
			return "the path is inside a .git directory", false
		case c == ".kz":
			return "the path is kz's own project configuration", false
		case agentDirs[c]:
			return "the path is an agent configuration directory (" + c + ")", false
		}
	}
	switch {
	case agentFiles[base]:
		return "the path is an agent configuration file (" + base + ")", false
	case rcFiles[base]:
		return "the path is a shell startup file (" + base + ")", false
	}
	if gd := e.gitdirOf(r); gd != "" {
		return "the path is inside the git directory " + gd + " named by a .git file", false
	}
	return "", false
}

// secret says why a resolved, clean absolute path is one a model must not
// read without a person's yes, or "": what the OS sandbox keeps from every
// command. That is a credential by its name (credentialPath), another
// process's environment or memory (procSecret), one of the
// home's credential files (HomeCredentialPaths: the agents' logins,
// tokens under ~/.config, shell histories, whose names alone say
// nothing), and kz's own configuration and data (ownPath). Where the
// workspace holds them (kz run in the home directory) the gate is all that
// keeps them from kz's own tools, which run in kz's process.
func (g *Gate) secret(r string) string {
	if why := credentialPath(r); why != "" {
		return why
	}
	if why := procSecret(r); why != "" {
		// Only a workspace of / holds them.
		return "the path exposes " + why
	}
	// Each is a dot-entry of the home or below one: the loop is for those
	// only (it runs for every entry a search meets).
	if g.homeDot != "" && strings.HasPrefix(r, g.homeDot) {
		for _, c := range g.homeCreds {
			if below(c, r) {
				return "the path holds the home's credentials (" + c + ")"
			}
		}
	}
	return g.ownPath(r)
}

// below reports whether the clean absolute path p is dir or below it, by
// whole components, without allocating (it runs for every entry a search
// meets).
func below(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir) && (dir == "/" || p[len(dir)] == '/')
}

// ownPath says why a resolved, clean absolute path is kz's own
// (Options.ConfigDir, DataDir, Private), or "".
func (g *Gate) ownPath(r string) string {
	for _, d := range g.protectedDirs {
		if below(d, r) {
			return "the path is kz's own configuration or data (" + d + ")"
		}
	}
	return ""
}

// gitdirOf looks for `.git` files (worktrees, submodules) in the workspace
// root and every directory between it and r; if one names a git directory
// that contains r, it returns that directory.
func (e *eval) gitdirOf(r string) string {
	if !within(e.ws, r) {
		return ""
	}
	// Start at the target itself only when it is a directory (deleting a
	// bare repository); a file holds no .git below it.
	dir := r
	if fi, err := os.Lstat(r); r != e.ws && (err != nil || !fi.IsDir()) {
		dir = filepath.Dir(r)
	}
	for {
		if gd := readGitFile(filepath.Join(dir, ".git"), e.home); gd != "" && within(gd, r) {
			return gd
		}
		if looksLikeGitDir(dir) {
			return dir
		}
		if dir == e.ws || dir == "/" {
			return ""
		}
		dir = filepath.Dir(dir)
	}
}

// looksLikeGitDir reports a git directory under any name (a bare
// repository, or the gitdir a worktree's .git file points to): HEAD, objects/
// and refs/ side by side.
func looksLikeGitDir(dir string) bool {
	// HEAD first: most directories lack it, so one lstat decides.
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

// readGitFile reads "gitdir: X" from a regular .git file and resolves X.
func readGitFile(p, home string) string {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	line, _ := bufio.NewReader(f).ReadString('\n')
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	res, err := resolvePath(filepath.Dir(p), gd, home)
	if err != nil {
		return ""
	}
	return res
}

// staticPrefix returns the directory part of a non-literal path before its
// first expansion, e.g. "/etc/" for "/etc/$x"; "" when there is none.
func staticPrefix(p string) string {
	k := strings.IndexAny(p, "$*?[{<`")
	if k < 0 {
		return p
	}
	j := strings.LastIndexByte(p[:k], '/')
	if j < 0 {
		return ""
	}
	return p[:j+1]
}
