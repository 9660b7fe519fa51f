package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/proc"
)

// Gemini CLI retries a failing model request up to general.maxAttempts
// times (default and maximum 10, 5 to 30 s apart), and over ACP it tells
// the client nothing about those retries, so kz cannot cut them short
// itself: a dead endpoint would hold the turn for minutes. The bound has to
// be a Gemini setting, and kz must not edit the person's settings files:
//
//   - system settings (GEMINI_CLI_SYSTEM_SETTINGS_PATH, highest precedence)
//     and system defaults (GEMINI_CLI_SYSTEM_DEFAULTS_PATH) are read only
//     when the file and every directory above it are owned by root and not
//     writable by group or others (Gemini's isFileAndDirectorySecureSync),
//     which a file kz writes under a temporary directory never is: Gemini
//     skips it with a security warning;
//   - workspace settings live in the person's project.
//
// So kz gives the agent an overlay of the user's Gemini directory through
// GEMINI_CLI_HOME: a <root>/.gemini whose settings.json is the user's own
// with general.maxAttempts bounded, and whose every other entry is a
// symbolic link to the real one (sessions, credentials, project registry,
// extensions), so that sessions written by one process are found by the
// next and nothing else changes.
//
// The overlay belongs to one kz session, not to one process: kz keeps it
// under its state directory, named by the kz session's id, so that every
// agent process of the session, and a later kz resuming the session, runs
// with the same GEMINI_CLI_HOME and can session/load what an earlier one
// recorded. Without a state directory (a runtime built outside kz's
// wiring) the overlay is a temporary directory removed with the runtime.

// geminiDir is Gemini CLI's directory under its home.
const geminiDir = ".gemini"

// overlayPrefix starts the name of every overlay directory, followed by
// "<pid>-<start>-" of the kz process that made it.
const overlayPrefix = "kz-gemini-home-"

// geminiOverlay is the Gemini home of one kz session's agent processes.
type geminiOverlay struct {
	// root is the value of GEMINI_CLI_HOME for the agent.
	root string
	// real is the user's Gemini directory (<home>/.gemini).
	real string
	// temporary says root is a temporary directory that Close removes; a
	// kept overlay (under kz's state directory) outlives kz.
	temporary bool
	log       *slog.Logger
}

// newGeminiOverlay prepares a temporary overlay for an agent started with
// env. The user's home is GEMINI_CLI_HOME, else HOME, of that environment.
func newGeminiOverlay(env []string, maxAttempts int, log *slog.Logger) (*geminiOverlay, error) {
	home, realDir, settings, err := overlaySource(env, maxAttempts)
	if err != nil {
		return nil, err
	}
	tmp := childenv.Lookup(env, "TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	sweepOverlays(tmp, log)
	// The name carries the owner's pid and start time, so that a later kz
	// can tell an overlay whose kz was killed (see sweepOverlays).
	root, err := os.MkdirTemp(tmp, fmt.Sprintf("%s%d-%d-", overlayPrefix, os.Getpid(), proc.SelfStart()))
	if err != nil {
		return nil, fmt.Errorf("gemini home: %w", err)
	}
	o := &geminiOverlay{root: root, real: realDir, temporary: true, log: log}
	if err := o.populate(home, settings); err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	return o, nil
}

// openGeminiHome prepares the kept overlay at root (created 0700 when
// missing) for an agent started with env. It is called before every start
// of an agent process: the settings are those the user has now, and
// entries the user's directory gained since are linked; what Gemini
// created in the overlay itself (an installation id, a project registry
// the user's directory lacked) is left as it is.
func openGeminiHome(env []string, maxAttempts int, root string, log *slog.Logger) (*geminiOverlay, error) {
	home, realDir, settings, err := overlaySource(env, maxAttempts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("gemini home: %w", err)
	}
	// MkdirAll leaves an existing directory's mode alone; the overlay
	// links to the person's credentials and must be theirs alone.
	if err := os.Chmod(root, 0o700); err != nil {
		return nil, fmt.Errorf("gemini home: %w", err)
	}
	o := &geminiOverlay{root: root, real: realDir, log: log}
	if err := o.populate(home, settings); err != nil {
		return nil, err
	}
	return o, nil
}

// overlaySource finds the user's home and Gemini directory in env (making
// the directories Gemini keeps its sessions in) and returns the bounded
// settings an overlay of it holds.
func overlaySource(env []string, maxAttempts int) (home, realDir string, settings []byte, err error) {
	home = childenv.Lookup(env, "GEMINI_CLI_HOME")
	if home == "" {
		home = childenv.Lookup(env, "HOME")
	}
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return "", "", nil, fmt.Errorf("gemini home: %w", err)
		}
	}
	realDir = filepath.Join(home, geminiDir)
	// Gemini keeps its sessions (tmp/<project>/chats) and prompt history
	// in these directories; they must exist in the real directory before
	// being linked, or Gemini would create them inside the overlay, apart
	// from the person's own.
	for _, d := range []string{"tmp", "history"} {
		if err := os.MkdirAll(filepath.Join(realDir, d), 0o700); err != nil {
			return "", "", nil, fmt.Errorf("gemini home: %w", err)
		}
	}
	settings, err = boundedSettings(filepath.Join(realDir, "settings.json"), maxAttempts)
	if err != nil {
		return "", "", nil, err
	}
	return home, realDir, settings, nil
}

// boundedSettings returns the user's settings file with general.maxAttempts
// at most maxAttempts (a lower value of the user's is kept) and
// advanced.ignoreLocalEnv set. Every other setting is kept as written
// (Gemini expands $VARS itself).
func boundedSettings(path string, maxAttempts int) ([]byte, error) {
	settings := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("gemini settings: %w", err)
	case len(strings.TrimSpace(string(b))) > 0:
		if err := json.Unmarshal(b, &settings); err != nil {
			// Gemini accepts comments in its settings; kz does not parse
			// them and leaves such a file to Gemini unchanged.
			return nil, fmt.Errorf("gemini settings %s: %w", path, err)
		}
	}
	general, _ := settings["general"].(map[string]any)
	if general == nil {
		general = map[string]any{}
	}
	if cur, ok := general["maxAttempts"].(float64); !ok || cur <= 0 || cur > float64(maxAttempts) {
		general["maxAttempts"] = maxAttempts
	}
	settings["general"] = general
	// The agent takes no local .env file: in a workspace kz trusts for it
	// (trust.go) every variable of the project's .env would join the
	// environment of every command it runs. Its credentials come from kz.
	advanced, _ := settings["advanced"].(map[string]any)
	if advanced == nil {
		advanced = map[string]any{}
	}
	advanced["ignoreLocalEnv"] = true
	settings["advanced"] = advanced
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("gemini settings: %w", err)
	}
	return out, nil
}

// populate writes the bounded settings and links every other entry of the
// real directory (and the home's .agents, which Gemini also reads) that
// the overlay does not hold yet. The settings are replaced by a rename, so
// that an agent starting meanwhile never reads half of them.
func (o *geminiOverlay) populate(home string, settings []byte) error {
	dir := filepath.Join(o.root, geminiDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("gemini home: %w", err)
	}
	f, err := os.CreateTemp(dir, ".settings-*.json")
	if err != nil {
		return fmt.Errorf("gemini home: %w", err)
	}
	_, werr := f.Write(settings)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, "settings.json"))
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("gemini home: %w", werr)
	}
	ents, err := os.ReadDir(o.real)
	if err != nil {
		return fmt.Errorf("gemini home: %w", err)
	}
	for _, e := range ents {
		if e.Name() == "settings.json" {
			continue
		}
		if err := linkMissing(filepath.Join(o.real, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(filepath.Join(home, ".agents")); err == nil {
		if err := linkMissing(filepath.Join(home, ".agents"), filepath.Join(o.root, ".agents")); err != nil {
			return err
		}
	}
	return nil
}

// linkMissing makes link a symbolic link to target unless an entry of
// that name exists (a link made earlier, or what Gemini created itself).
func linkMissing(target, link string) error {
	if _, err := os.Lstat(link); err == nil {
		return nil
	}
	if err := os.Symlink(target, link); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("gemini home: %w", err)
	}
	return nil
}

// env returns the variable that points the agent at the overlay.
func (o *geminiOverlay) env() string { return "GEMINI_CLI_HOME=" + o.root }

// Close ends a temporary overlay: it moves the entries the agent created
// in it (an installation id, a first project registry) into the real
// directory when it has none of that name, and removes the overlay.
// Entries the agent replaced instead of writing through the link, and its
// changes to the overlay's settings, are dropped: kz never changes the
// person's settings. A kept overlay stays as it is, for the session's next
// agent. Call it once every agent process on the overlay has exited.
func (o *geminiOverlay) Close() error {
	if !o.temporary {
		return nil
	}
	dir := filepath.Join(o.root, geminiDir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() == "settings.json" || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		dst := filepath.Join(o.real, e.Name())
		if _, err := os.Lstat(dst); err == nil {
			o.log.Debug("acp: dropping an entry gemini replaced in its overlay home", "name", e.Name())
			continue
		}
		if err := keepEntry(filepath.Join(dir, e.Name()), dst); err != nil {
			o.log.Warn("acp: could not keep an entry gemini created", "name", e.Name(), "err", err)
		}
	}
	if err := os.RemoveAll(o.root); err != nil {
		return fmt.Errorf("remove gemini overlay home: %w", err)
	}
	return nil
}

// keepEntry moves src to dst. Across file systems (the overlay is under
// TMPDIR) a regular file is copied instead, written to a temporary file
// beside dst and renamed so that a reader never sees half of it; Gemini
// creates only small files (an id, a registry) at the top of its directory.
func keepEntry(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil {
		return nil
	}
	fi, serr := os.Lstat(src)
	if serr != nil || !fi.Mode().IsRegular() {
		return err
	}
	b, rerr := os.ReadFile(src)
	if rerr != nil {
		return fmt.Errorf("keep %s: %w", src, rerr)
	}
	f, cerr := os.CreateTemp(filepath.Dir(dst), ".kz-"+filepath.Base(dst)+"-*")
	if cerr != nil {
		return fmt.Errorf("keep %s: %w", src, cerr)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, fi.Mode().Perm())
	}
	if werr == nil {
		werr = os.Rename(tmp, dst)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("keep %s: %w", src, werr)
	}
	return nil
}

// sweepOverlays removes the overlays under tmp that a kz killed before it
// could close them left behind: those this user owns whose maker, named
// by pid and start time, no longer runs. An overlay holds symbolic links
// into the person's Gemini directory; removing it removes the links only.
// Names without a pid (none are made so) and other users' overlays are
// left alone. Failures are logged: a leftover overlay is only clutter.
func sweepOverlays(tmp string, log *slog.Logger) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), overlayPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		f := strings.SplitN(name, "-", 3)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 || proc.Alive(pid, start) {
			continue
		}
		path := filepath.Join(tmp, e.Name())
		if info, err := os.Lstat(path); err != nil || !ownedByMe(info) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			log.Warn("acp: could not remove a gemini overlay home left by a killed kz", "path", path, "err", err)
		}
	}
}

// ownedByMe reports whether this user owns the file.
func ownedByMe(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
