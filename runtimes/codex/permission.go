package codex

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// Decisions kz sends to Codex. acceptForSession and
// acceptWithExecpolicyAmendment are never sent: the first would let Codex
// run the command again without asking kz, the second writes a permanent
// allow rule into CODEX_HOME/rules.
const (
	decisionAccept  = "accept"
	decisionDecline = "decline"
	decisionCancel  = "cancel"
)

type approvalParams struct {
	ItemID    string  `json:"itemId"`
	Command   string  `json:"command"`
	Cwd       string  `json:"cwd"`
	Reason    *string `json:"reason"`
	GrantRoot *string `json:"grantRoot"`
}

// request answers one request of the CLI. Approvals go through kz's gate;
// anything else kz cannot serve is refused with a JSON-RPC error so that
// Codex does not wait forever.
func (tr *turnRun) request(ctx context.Context, m wire) {
	var p approvalParams
	_ = json.Unmarshal(m.Params, &p)
	var req engine.PermissionRequest
	switch m.Method {
	case "item/commandExecution/requestApproval":
		req = tr.commandRequest(p)
	case "item/fileChange/requestApproval":
		var ok bool
		if req, ok = tr.fileRequest(p); !ok {
			// Without the change kz cannot judge it; refusing is safe.
			tr.rt.log.Warn("codex: file approval for an unknown item, declined", "item", p.ItemID)
			_ = tr.c.Reply(m.ID, map[string]string{"decision": decisionDecline})
			return
		}
	default:
		tr.rt.log.Info("codex: request kz does not serve", "method", m.Method)
		_ = tr.c.ReplyError(m.ID, -32601, "kz does not support "+m.Method)
		return
	}
	ans := tr.t.RequestPermission(ctx, req)
	decision := decisionDecline
	switch {
	case ctx.Err() != nil || tr.stopping:
		decision = decisionCancel
	case ans.Allowed():
		decision = decisionAccept
	}
	if err := tr.c.Reply(m.ID, map[string]string{"decision": decision}); err != nil {
		tr.rt.log.Warn("codex: could not answer an approval", "err", err)
	}
}

func (tr *turnRun) commandRequest(p approvalParams) engine.PermissionRequest {
	cmd := p.Command
	if cmd == "" {
		if it := tr.items[p.ItemID]; it != nil {
			cmd = it.Command
		}
	}
	in := map[string]string{"command": cmd, "cwd": p.Cwd}
	if p.Reason != nil {
		in["reason"] = *p.Reason
	}
	raw, _ := json.Marshal(in)
	// Sandboxed stays false: an accepted command that the sandbox blocks
	// is re-run by Codex outside it without asking again.
	return engine.PermissionRequest{ToolCallID: p.ItemID, Tool: "shell", Input: raw, Command: unwrapShell(cmd)}
}

func (tr *turnRun) fileRequest(p approvalParams) (engine.PermissionRequest, bool) {
	it := tr.items[p.ItemID]
	if it == nil || it.Type != "fileChange" || len(it.Changes) == 0 {
		return engine.PermissionRequest{}, false
	}
	paths := tr.paths(it)
	if p.GrantRoot != nil && *p.GrantRoot != "" {
		paths = append(paths, tr.abs(*p.GrantRoot))
	}
	var diff strings.Builder
	for _, ch := range it.Changes {
		diff.WriteString(renderDiff(tr.rel(ch.Path), ch))
	}
	raw, _ := json.Marshal(map[string]any{"changes": it.Changes})
	return engine.PermissionRequest{ToolCallID: p.ItemID, Tool: "apply_patch", Input: raw, Paths: paths,
		Write: true, Diff: diff.String()}, true
}

// unwrapShell returns the script of a `bash -lc '<script>'` command line,
// which is how Codex reports every command, so that kz's shell rules judge
// what actually runs. Anything else is returned unchanged.
func unwrapShell(cmd string) string {
	w, ok := shellWords(cmd)
	if !ok || len(w) != 3 {
		return cmd
	}
	switch path.Base(w[0]) {
	case "bash", "sh", "zsh", "dash":
	default:
		return cmd
	}
	if w[1] != "-c" && w[1] != "-lc" {
		return cmd
	}
	return w[2]
}

// shellWords splits a command line into words with POSIX quoting (single
// quotes, double quotes with backslash escapes, bare backslashes). It
// reports false on anything it does not understand (unbalanced quotes).
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
