package app

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/engine/enginetest"
	"github.com/kaizen-code/kz/runtimes/scripted"
	"github.com/kaizen-code/kz/tools"
	"github.com/kaizen-code/kz/tools/permission"
	"github.com/kaizen-code/kz/tools/workspace"
)

// TestReadImageUsesTheGateInTheWorkspace: an image in the workspace is
// attached only when the read_file gate allows it (a deny rule hides it
// as it hides it from the model); an image outside the workspace that the
// person named is attached as it is; a text file is not an image and a
// missing file is missing, so the TUI treats them as text mentions.
func TestReadImageUsesTheGateInTheWorkspace(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	img := enginetest.PNG(t, 5, 5)
	for p, body := range map[string][]byte{filepath.Join(dir, "shot.png"): img, filepath.Join(dir, "secret.png"): img,
		filepath.Join(dir, "notes.txt"): []byte("text"), filepath.Join(outside, "screen.png"): img} {
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.Close() }()
	gate, err := permission.New(permission.Options{User: permission.Rules{Deny: []string{"Read(./secret.png)"}},
		Home: t.TempDir(), ConfigDir: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := scripted.Parse("scripted", "test.jsonl", strings.NewReader(`{"kz_script":1,"capabilities":["text_completion"]}`+"\n"+`{"type":"assistant_message","text":"ok"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := engine.NewSession(engine.Config{Journal: nopJournal{}, Workspace: ws.Dir(), Gate: gate, Interactive: true,
		Runtimes: []engine.RuntimeEntry{{Runtime: rt, Models: []string{"m"}}}, Runtime: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close(ctx) }()
	r := mentionReader{sess: sess, env: tools.NewEnv(ws, sess.ID(), nil)}
	for _, p := range []string{"shot.png", filepath.Join(ws.Dir(), "shot.png"), filepath.Join(outside, "screen.png")} {
		im, err := r.ReadImage(ctx, p)
		if err != nil || im.MediaType != "image/png" || !bytes.Equal(im.Data, img) {
			t.Errorf("%s: %+v, %v", p, im, err)
		}
	}
	if _, err := r.ReadImage(ctx, "secret.png"); err == nil || !strings.Contains(err.Error(), "deny") {
		t.Errorf("a denied image was attached: %v", err)
	}
	if _, err := r.ReadImage(ctx, "notes.txt"); !errors.Is(err, engine.ErrNotImage) {
		t.Errorf("notes.txt: %v", err)
	}
	if _, err := r.ReadImage(ctx, "missing.png"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing.png: %v", err)
	}
	if _, err := r.ReadImage(ctx, "../"+filepath.Base(outside)+"/screen.png"); err == nil {
		t.Error("a relative path out of the workspace was attached")
	}
}
