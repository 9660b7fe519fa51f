package codex

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/runtimes/jsonrpc"
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
func (tr *turnRun) request(ctx context.Context, m jsonrpc.Message) {
	if m.Method == methodElicitation {
		tr.elicitation(ctx, m)
		return
	}
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
// what actually runs. The line is parsed with kz's shell parser
// (mvdan.cc/sh); anything that is not exactly a shell, -c or -lc and one
// literal script word is returned unchanged, to be judged as it is.
func unwrapShell(cmd string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return cmd
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(st.Redirs) > 0 || st.Negated || st.Background || len(call.Args) != 3 {
		return cmd
	}
	var w [3]string
	for i, a := range call.Args {
		if w[i], ok = literalWord(a); !ok {
			return cmd
		}
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

// literalWord returns the value of a word made only of unquoted, single-
// and double-quoted literal text (no expansions), with quoting removed.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(lit.Value, "\\\"$`\n"))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes that quote the next character: any
// character outside quotes (only is ""), or one of only inside double
// quotes. A backslash-newline is a line continuation and disappears.
func unescape(s, only string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (only == "" || strings.IndexByte(only, s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
