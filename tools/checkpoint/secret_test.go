package checkpoint

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/workspace"
)

// blobStore is a memStore that keeps every content a commit stores.
type blobStore struct {
	memStore
	blobs  [][]byte
	forgot []string
}

func (b *blobStore) Commit(ctx context.Context, c Commit) error {
	b.mu.Lock()
	for _, v := range c.Blobs {
		b.blobs = append(b.blobs, v)
	}
	b.forgot = append(b.forgot, c.Forget...)
	b.mu.Unlock()
	return b.memStore.Commit(ctx, c)
}

// TestCredentialsAreNeverCheckpointed: a checkpoint keeps the content it
// records in the store, so a credential (a project's .env, a key, an SSH
// key, wherever it is and however its name is cased) is never scanned,
// baselined or checkpointed, whichever scan meets it: the turn's full
// scans, a call's quick one through the watcher, a predicted path. Not
// even when something changes it (a CLI agent on a machine without a
// sandbox). A baseline entry an older kz stored of one is forgotten, its
// content with it, without a checkpoint. The project's other files are
// checkpointed as before.
func TestCredentialsAreNeverCheckpointed(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	creds := []string{".env", ".env.local", "deploy/.ssh/id_ed25519", "certs/Server.PEM", "keys/app.key", "config/credentials.json",
		"backup/id_rsa.old", "home/.aws/credentials", "home/.netrc"}
	for _, watch := range []bool{true, false} {
		name := "watched"
		if !watch {
			name = "full scans"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"main.go": "package main\n"}
			for _, c := range creds {
				files[c] = "TOKEN=" + secret + "\n"
			}
			put(t, dir, files)
			ws, err := workspace.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ws.Close() })
			st := &blobStore{}
			// What an older kz stored.
			st.base = map[string]BaselineEntry{".env": {Path: ".env", SHA256: "00"}}
			tr := New(Options{WS: ws, Store: st, NoWatch: !watch})
			t.Cleanup(func() { _ = tr.Close() })
			ctx := context.Background()
			turn := engine.CheckpointCall{SessionID: "s", TurnID: 1, Runtime: "native"}
			if err := tr.Refresh(ctx, turn); err != nil {
				t.Fatal(err)
			}
			call := engine.CheckpointCall{SessionID: "s", TurnID: 1, ToolCallID: "c1", Tool: "bash", Runtime: "native",
				Command: "echo x > main.go; echo k > .env; rm keys/app.key", Paths: []string{dir + "/certs/Server.PEM"}}
			if err := tr.BeforeCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			changed := map[string]string{"main.go": "package main // 1\n"}
			for _, c := range creds {
				changed[c] = "TOKEN=" + secret + "-2\n"
			}
			put(t, dir, changed)
			if err := tr.AfterCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			put(t, dir, map[string]string{".env.local": "TOKEN=" + secret + "-3\n", "main.go": "package main // 2\n"})
			if err := tr.AfterCall(ctx, turn); err != nil {
				t.Fatal(err)
			}
			if got, want := calls(st.cps), []string{"c1:~main.go", ":~main.go"}; !slices.Equal(got, want) {
				t.Errorf("checkpoints %q, want %q", got, want)
			}
			for p := range st.base {
				if p != "main.go" {
					t.Errorf("the baseline holds %s", p)
				}
			}
			for _, b := range st.blobs {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("a secret is in the store: %q", b)
				}
			}
			// The older entry is forgotten, content and all
			// (store.ScanCommit.Forget), not deleted as a file is.
			if !slices.Equal(st.forgot, []string{".env"}) {
				t.Errorf("forgot %q, want [.env]", st.forgot)
			}
		})
	}
}
