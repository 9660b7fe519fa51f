package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/attach"
	"github.com/kaizen-code/kz/tools"
)

// mentionReader reads an @-mentioned file for the TUI exactly as the
// read_file tool would for the model: the tool prepares the call (path
// confined to the workspace), the session decides it with its gate, mode
// and permission mode and journals the decision like any other read, and
// only an allowed read runs. A read the gate would ask about or deny is
// refused with its reason.
type mentionReader struct {
	sess reader
	env  *tools.Env
}

// reader is what a mention needs of the session; *engine.Session
// implements it.
type reader interface {
	CheckRead(ctx context.Context, req engine.PermissionRequest) engine.Verdict
}

// ReadMention implements tui.MentionReader.
func (r mentionReader) ReadMention(ctx context.Context, path string) (string, error) {
	input, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	call, err := tools.ReadFile{}.Prepare(ctx, r.env, input)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	req := call.Request()
	req.Tool, req.ToolCallID, req.Input = "read_file", "mention", input
	if v := r.sess.CheckRead(ctx, req); v.Decision != engine.DecisionAllow {
		return "", fmt.Errorf("read_file %s: the gate says %s: %s", path, v.Decision, v.Reason)
	}
	return call.Run(ctx, &tools.RunContext{Env: r.env, ToolCallID: "mention", Emit: func(engine.Event) {}})
}

// ReadImage implements tui.ImageReader: an `@` mentioned or pasted image
// file. The file is read through an os.Root (attach.Image) and must sniff
// as an image; a file in the workspace is then decided by the gate like a
// read_file call, so a path a deny rule hides is not attached either. An
// absolute path outside the workspace is a file the person named
// themselves (a screenshot in /tmp): the gate, which confines what the
// model reaches, has no say over it, and only an image can come of it.
func (r mentionReader) ReadImage(ctx context.Context, path string) (engine.Image, error) {
	ws := r.env.WS.Dir()
	img, err := attach.Image(ws, path)
	if err != nil {
		return engine.Image{}, err
	}
	if filepath.IsAbs(path) {
		if rel, err := filepath.Rel(ws, path); err != nil || !filepath.IsLocal(rel) {
			return img, nil
		}
	}
	input, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		return engine.Image{}, fmt.Errorf("attach %s: %w", path, err)
	}
	call, err := tools.ReadFile{}.Prepare(ctx, r.env, input)
	if err != nil {
		return engine.Image{}, fmt.Errorf("attach %s: %w", path, err)
	}
	req := call.Request()
	req.Tool, req.ToolCallID, req.Input = "read_file", "mention", input
	if v := r.sess.CheckRead(ctx, req); v.Decision != engine.DecisionAllow {
		return engine.Image{}, fmt.Errorf("read_file %s: the gate says %s: %s", path, v.Decision, v.Reason)
	}
	return img, nil
}
