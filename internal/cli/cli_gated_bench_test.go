package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kaizen-code/kz/runtimes/codex/codextest"
)

// claudeGated runs one turn of Claude Code the way kz drives it, without
// kz: the benchmark itself is the host. Claude Code runs with kz's
// protocol flags (stream-json both ways, the permission prompt on stdio),
// is sent kz's initialize request with its PreToolUse hook and the
// prompt, and every hook callback and permission request is answered
// "allow" at once, as kz's gate answers under yolo. Once the result line
// comes, stdin is closed and the process waited for, as kz does.
//
// Its time is therefore what any host that sees every tool call before
// it runs pays Claude Code for that, and nothing of kz: no kz process
// start (the benchmark is already running), no sandbox, no store, no
// checkpoint. kz's own overhead is the difference between its time and
// this one.
func claudeGated(bin, prompt, dir string, env []string) (time.Duration, error) {
	cmd := exec.Command(bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--permission-prompt-tool", "stdio", "--strict-mcp-config",
		"--setting-sources", "user", "--permission-mode", "default")
	cmd.Dir, cmd.Env = dir, env
	return hosted(cmd, "claude", func(stdin io.Writer, stdout io.Reader) (bool, error) {
		answer, err := hostClaude(stdin, stdout, prompt)
		return strings.Contains(answer, benchAnswer), err
	})
}

// hosted runs cmd with host speaking to it over its stdin and stdout, and
// returns the time from its start to its exit. Whatever host returns,
// stdin is then closed and stdout drained so that the CLI ends; its exit
// is part of the time, as it is for kz. host says whether the CLI gave
// the benchmark's answer.
func hosted(cmd *exec.Cmd, name string, host func(stdin io.Writer, stdout io.Reader) (bool, error)) (time.Duration, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, fmt.Errorf("stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, fmt.Errorf("stdout pipe: %w", err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", name, err)
	}
	answered, hostErr := host(stdin, stdout)
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	took := time.Since(start)
	switch {
	case hostErr != nil:
		return 0, fmt.Errorf("%s (gated): %w\n%s", name, hostErr, stderr.String())
	case waitErr != nil:
		return 0, fmt.Errorf("%s (gated): %w\n%s", name, waitErr, stderr.String())
	case !answered:
		return 0, fmt.Errorf("%s (gated): no answer in the turn\n%s", name, stderr.String())
	}
	return took, nil
}

// hostClaude speaks kz's side of the protocol until the result line and
// returns the result's text.
func hostClaude(stdin io.Writer, stdout io.Reader, prompt string) (string, error) {
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = stdin.Write(append(b, '\n'))
		return err
	}
	if err := send(map[string]any{"type": "control_request", "request_id": "bench-1", "request": map[string]any{
		"subtype": "initialize", "hooks": map[string]any{
			"PreToolUse": []any{map[string]any{"hookCallbackIds": []string{"bench_pre_tool_use"}}}}}}); err != nil {
		return "", fmt.Errorf("write initialize: %w", err)
	}
	if err := send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil, "message": map[string]any{
		"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}}}); err != nil {
		return "", fmt.Errorf("write the prompt: %w", err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var m struct {
			Type      string          `json:"type"`
			RequestID string          `json:"request_id"`
			Request   json.RawMessage `json:"request"`
			Result    string          `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Type {
		case "result":
			return m.Result, nil
		case "control_request":
			var r struct {
				Subtype string          `json:"subtype"`
				Input   json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(m.Request, &r); err != nil {
				return "", fmt.Errorf("control request: %w", err)
			}
			var resp any
			switch r.Subtype {
			case "hook_callback":
				resp = map[string]any{"continue": true, "hookSpecificOutput": map[string]any{
					"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "benchmark"}}
			case "can_use_tool":
				resp = map[string]any{"behavior": "allow", "updatedInput": r.Input}
			default:
				if err := send(map[string]any{"type": "control_response", "response": map[string]any{
					"subtype": "error", "request_id": m.RequestID, "error": "unsupported: " + r.Subtype}}); err != nil {
					return "", err
				}
				continue
			}
			if err := send(map[string]any{"type": "control_response", "response": map[string]any{
				"subtype": "success", "request_id": m.RequestID, "response": resp}}); err != nil {
				return "", fmt.Errorf("answer %s: %w", r.Subtype, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read claude: %w", err)
	}
	return "", fmt.Errorf("claude ended without a result")
}

// codexGated runs one turn of Codex the way kz drives it, without kz:
// `codex app-server` with kz's untrusted-project override, kz's handshake
// (initialize, initialized, config/read, thread/start with every command
// sent for approval, turn/start), every approval answered "accept" at
// once, as kz's gate answers under yolo, and stdin closed at
// turn/completed, after which the process is waited for. Codex's own
// sandbox is off (danger-full-access), as kz asks when its bubblewrap
// confines the app-server: the gated run has neither. Like claudeGated it
// is the least a host that decides every command pays Codex.
func codexGated(bin, prompt, dir string, env []string) (time.Duration, error) {
	var projects []string
	for d := dir; ; d = filepath.Dir(d) {
		projects = append(projects, strconv.Quote(d)+`={trust_level="untrusted"}`)
		if filepath.Dir(d) == d {
			break
		}
	}
	cmd := exec.Command(bin, "-c", "projects={"+strings.Join(projects, ",")+"}", "app-server")
	cmd.Dir, cmd.Env = dir, env
	return hosted(cmd, "codex", func(stdin io.Writer, stdout io.Reader) (bool, error) {
		return hostCodex(stdin, stdout, prompt, dir)
	})
}

// hostCodex speaks kz's side of the app-server protocol until
// turn/completed, and says whether the answer came.
func hostCodex(stdin io.Writer, stdout io.Reader, prompt, dir string) (bool, error) {
	send := func(v map[string]any) error {
		v["jsonrpc"] = "2.0"
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = stdin.Write(append(b, '\n'))
		return err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	answered := false
	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	// next reads until the response to request id, answering what Codex
	// asks meanwhile; with id 0 it reads until turn/completed.
	next := func(id int) (json.RawMessage, error) {
		for sc.Scan() {
			line := sc.Bytes()
			answered = answered || bytes.Contains(line, []byte(benchAnswer))
			var m message
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			switch {
			case m.Method != "" && len(m.ID) > 0:
				reply := map[string]any{"id": m.ID, "result": map[string]string{"decision": "accept"}}
				if !strings.HasSuffix(m.Method, "/requestApproval") {
					reply = map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "unsupported: " + m.Method}}
				}
				if err := send(reply); err != nil {
					return nil, fmt.Errorf("answer %s: %w", m.Method, err)
				}
			case m.Method == "turn/completed" && id == 0:
				return nil, nil
			case m.Method == "" && string(m.ID) == fmt.Sprint(id):
				if len(m.Error) > 0 {
					return nil, fmt.Errorf("request %d: %s", id, m.Error)
				}
				return m.Result, nil
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read codex: %w", err)
		}
		return nil, errors.New("codex ended before the turn did")
	}
	call := func(id int, method string, params any) (json.RawMessage, error) {
		if err := send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
			return nil, fmt.Errorf("write %s: %w", method, err)
		}
		return next(id)
	}
	if _, err := call(1, "initialize", map[string]any{"clientInfo": map[string]any{"name": "bench", "version": "0"},
		"capabilities": map[string]any{"experimentalApi": true}}); err != nil {
		return false, err
	}
	if err := send(map[string]any{"method": "initialized"}); err != nil {
		return false, err
	}
	if _, err := call(2, "config/read", map[string]any{"cwd": dir}); err != nil {
		return false, err
	}
	res, err := call(3, "thread/start", map[string]any{"cwd": dir, "approvalPolicy": "untrusted",
		"sandbox": "danger-full-access", "approvalsReviewer": "user", "model": codextest.Model})
	if err != nil {
		return false, err
	}
	var th struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(res, &th); err != nil || th.Thread.ID == "" {
		return false, fmt.Errorf("thread/start: no thread id in %s", res)
	}
	if _, err := call(4, "turn/start", map[string]any{"threadId": th.Thread.ID,
		"input": []any{map[string]any{"type": "text", "text": prompt}}}); err != nil {
		return false, err
	}
	_, err = next(0)
	return answered, err
}
