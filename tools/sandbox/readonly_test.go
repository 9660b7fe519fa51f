//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testReadOnlyProfileWritesOnlyTemp: under the read-only profile, every
// way of creating or changing a file anywhere but the private temp dir
// fails (the workspace, the home, the host's /tmp and /dev/shm, /var/tmp,
// through a symlink, by rename, truncation, mkdir, a child process), and
// the host sees no change; the private temp dir works.
func testReadOnlyProfileWritesOnlyTemp(t *testing.T, rt route) {
	f := newRouteFixture(t, rt)
	hostTmp := realDir(t, t.TempDir()) // under the host's /tmp, beside the workspace
	writeFile(t, filepath.Join(f.ws, "kept.txt"), "original")
	writeFile(t, filepath.Join(f.outside, "kept.txt"), "original")
	if err := os.Symlink(f.outside, filepath.Join(f.ws, "outlink")); err != nil {
		t.Fatal(err)
	}
	shm := "/dev/shm/kz-sandbox-test-" + filepath.Base(f.outside)
	t.Cleanup(func() { _ = os.Remove(shm) })
	// private: the path is the private temp dir from inside (/tmp,
	// /dev/shm), so the write may succeed there; the host's path must
	// stay untouched all the same.
	cases := []struct {
		name, script, marker string
		private              bool
	}{
		{"workspace new file", "echo x > new.txt", filepath.Join(f.ws, "new.txt"), false},
		{"workspace subdir", "mkdir -p sub/deep && echo x > sub/deep/f", filepath.Join(f.ws, "sub"), false},
		{"workspace truncate", ": > kept.txt", "", false},
		{"workspace append", "echo more >> kept.txt", "", false},
		{"workspace rename", "mv kept.txt moved.txt", filepath.Join(f.ws, "moved.txt"), false},
		{"workspace delete", "rm -f kept.txt", "", false},
		{"home", "echo x > " + shellQuote(f.home+"/pwned"), filepath.Join(f.home, "pwned"), false},
		{"home rc", "echo x >> " + shellQuote(f.home+"/.bashrc"), filepath.Join(f.home, ".bashrc"), false},
		{"var tmp", "echo x > " + shellQuote(f.outside+"/pwned"), filepath.Join(f.outside, "pwned"), false},
		{"through symlink", "echo x > outlink/viafollow", filepath.Join(f.outside, "viafollow"), false},
		{"host tmp", "echo x > " + shellQuote(hostTmp+"/pwned"), filepath.Join(hostTmp, "pwned"), false},
		{"host tmp mkdir", "mkdir -p " + shellQuote(hostTmp+"/d"), filepath.Join(hostTmp, "d"), true},
		{"dev shm", "echo x > " + shm, shm, true},
		{"child process", "sh -c 'echo x > new2.txt'", filepath.Join(f.ws, "new2.txt"), false},
		{"python-like tool", "cp kept.txt copy.txt", filepath.Join(f.ws, "copy.txt"), false},
		{"symlink creation", "ln -s /etc link", filepath.Join(f.ws, "link"), false},
		{"touch", "touch -d 2000-01-01 kept.txt", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.run(t, readOnly, tc.script+"; echo status=$?")
			if r.setupErr != nil {
				t.Fatalf("setup: %v\n%s", r.setupErr, r.out)
			}
			if !tc.private && strings.Contains(r.out, "status=0") {
				t.Errorf("the write succeeded inside the sandbox:\n%s", r.out)
			}
			if tc.marker != "" && exists(tc.marker) {
				t.Errorf("%s exists on the host", tc.marker)
			}
			if got := readFile(t, filepath.Join(f.ws, "kept.txt")); got != "original" {
				t.Errorf("kept.txt = %q", got)
			}
			if fi, err := os.Stat(filepath.Join(f.ws, "kept.txt")); err != nil || fi.ModTime().Year() == 2000 {
				t.Errorf("kept.txt touched: %v", err)
			}
		})
	}
	// The private temp dir is the one writable place, under /tmp and
	// $TMPDIR alike, and the host sees it in the sandbox's temp dir.
	r := f.run(t, readOnly, `echo t1 > /tmp/a && echo t2 > "$TMPDIR/b" && mkdir -p /tmp/d && cat /tmp/a "$TMPDIR/b"`)
	if r.code != 0 || r.out != "t1\nt2\n" {
		t.Fatalf("temp dir: %+v", r)
	}
	if got := readFile(t, filepath.Join(f.sb.TempDir(), "a")); got != "t1\n" {
		t.Errorf("temp file on the host: %q", got)
	}
	// Reading stays possible: the workspace, outside, /proc of the
	// sandbox.
	r = f.run(t, readOnly, "cat kept.txt "+shellQuote(f.outside+"/kept.txt")+" && test -r /proc/self/status && echo ok")
	if r.code != 0 || !strings.Contains(r.out, "originaloriginalok") {
		t.Errorf("reads: %+v", r)
	}
}

// testReadOnlyHidesWorkspaceCredentials: a read-only command cannot read
// credential files of the workspace (dotenv files, keys, a .ssh
// directory), at any depth; a workspace-write command (an approved
// `npm test`) can.
func testReadOnlyHidesWorkspaceCredentials(t *testing.T, rt route) {
	f := newRouteFixture(t, rt)
	files := []string{".env", ".env.local", "app/.env.production", "certs/server.pem", "certs/tls.key", "deploy/id_rsa",
		".ssh/id_ed25519", "deep/a/b/c/.netrc", "cfg/credentials.json", "k/store.p12", "node/.npmrc", "py/.pypirc",
		"db/.pgpass", "x/.git-credentials", "j/app.jks"}
	for _, p := range files {
		writeFile(t, filepath.Join(f.ws, p), "TOPSECRET-"+p)
	}
	writeFile(t, filepath.Join(f.ws, "README.md"), "public")
	for _, p := range files {
		t.Run(p, func(t *testing.T) {
			r := f.run(t, readOnly, "cat "+shellQuote(p)+"; cat README.md")
			if strings.Contains(r.out, "TOPSECRET") {
				t.Errorf("read-only command read %s: %q", p, r.out)
			}
			if !strings.Contains(r.out, "public") {
				t.Errorf("README.md unreadable: %q", r.out)
			}
			r = f.run(t, wsWrite, "cat "+shellQuote(p))
			if !strings.Contains(r.out, "TOPSECRET-"+p) {
				t.Errorf("workspace-write command cannot read %s: %q", p, r.out)
			}
		})
	}
	// Whatever the spelling, the directory listing does not leak them.
	r := f.run(t, readOnly, "grep -r TOPSECRET . ; cat .e*; cat $(find . -name '*.pem')")
	if strings.Contains(r.out, "TOPSECRET") {
		t.Errorf("leak through grep, glob or find:\n%s", r.out)
	}
}

// testTempDirPrivateAndRemoved: each session has its own temp dir, which
// the host's /tmp and other sessions cannot see into, and which Close
// removes.
func testTempDirPrivateAndRemoved(t *testing.T, rt route) {
	a := newRouteFixture(t, rt)
	b := newRouteFixture(t, rt)
	hostTmp := realDir(t, t.TempDir())
	writeFile(t, filepath.Join(hostTmp, "host-secret"), "HOSTTMP")
	if r := a.run(t, readOnly, "echo AAA > /tmp/mine"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for name, script := range map[string]string{
		"other session":    "cat /tmp/mine",
		"host tmp by path": "cat " + shellQuote(hostTmp+"/host-secret"),
		"host tmp listing": "ls -a /tmp; find /tmp",
	} {
		r := b.run(t, wsWrite, script)
		if strings.Contains(r.out, "AAA") || strings.Contains(r.out, "HOSTTMP") {
			t.Errorf("%s: %q", name, r.out)
		}
		if name == "host tmp listing" && (strings.Contains(r.out, "host-secret") || strings.Contains(r.out, "/mine")) {
			t.Errorf("%s: %q", name, r.out)
		}
	}
	dir := a.sb.TempDir()
	if !exists(filepath.Join(dir, "mine")) {
		t.Fatal("temp file missing before Close")
	}
	// A command may leave a directory it cannot even be entered; Close
	// removes it all the same.
	if r := a.run(t, readOnly, "mkdir -p /tmp/locked/x && touch /tmp/locked/x/f && chmod 000 /tmp/locked/x /tmp/locked"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if err := a.sb.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(dir) || exists(filepath.Dir(dir)) {
		t.Errorf("temp dir %s still exists after Close", dir)
	}
	if _, err := a.sb.Command(t.Context(), readOnly, Spec{Argv: []string{"true"}}); err == nil {
		t.Error("Command works after Close")
	}
	if _, err := a.sb.Cmd(t.Context(), readOnly, Spec{Argv: []string{"true"}}); err == nil {
		t.Error("Cmd works after Close")
	}
}
