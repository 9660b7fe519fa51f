package tui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaizen-code/kz/runtimes/llm"
	"github.com/kaizen-code/kz/runtimes/llm/llmtest"
)

// The fake model servers of the per-runtime end-to-end scenario
// (e2e_runtimes_test.go). Each speaks one wire protocol and plays the same
// logical script: what it answers depends only on the scenario prompt a
// request carries last and on how many tool results follow that prompt,
// never on how many requests came before. So the side requests the real
// CLIs make (titles, summaries, token counts) and the retries of a loaded
// machine cannot put the script out of step.

// scenarioCallKind is the kind of tool call the fake model makes.
type scenarioCallKind string

const (
	callShell scenarioCallKind = "shell"
	callRead  scenarioCallKind = "read"
	callWrite scenarioCallKind = "write"
)

// scenarioCall is one tool call of the script, protocol-neutral: each
// fake renders it with the tool names its client offers.
type scenarioCall struct {
	kind    scenarioCallKind
	command string // callShell
	path    string // callRead, callWrite: relative to the workspace
	old     string // callWrite: the file's content before, for Codex's patch
	content string // callWrite: the whole new content
}

// scenarioReply is what the fake model answers: a call, or a final text.
type scenarioReply struct {
	call *scenarioCall
	text string
}

// The prompts of the scenario and the final texts that answer them. The
// prompts are what the person types; a fake finds its place in the script
// by them.
const (
	promptText  = "say hello"
	promptAllow = "append one to the log"
	promptDeny  = "append two to the log"
	promptEdit  = "edit notes.txt"
	promptSleep = "wait for the long job"

	answerText  = "Hello from the fake model."
	answerAllow = "Appended one line."
	answerDeny  = "Understood, nothing appended."
	answerEdit  = "Edited notes.txt."
	answerSleep = "The long job finished."
)

// notesBefore is notes.txt before the edit; notesProposed changes line 2
// and line 19, far enough apart to make two hunks; notesAccepted is the
// file once the second hunk is rejected.
var (
	notesBefore   = numberedLines(func(i int) string { return fmt.Sprintf("line %d", i) })
	notesProposed = numberedLines(func(i int) string {
		switch i {
		case 2:
			return "line two"
		case 19:
			return "line nineteen"
		}
		return fmt.Sprintf("line %d", i)
	})
	notesAccepted = numberedLines(func(i int) string {
		if i == 2 {
			return "line two"
		}
		return fmt.Sprintf("line %d", i)
	})
)

func numberedLines(f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// scenarioScript answers the scenario prompt prompt after results tool
// results. readFirst makes the edit read the file before writing it, as
// Claude Code requires of a file that exists (it refuses a write to a
// file it has not read, before asking anybody).
func scenarioScript(prompt string, results int, readFirst bool) scenarioReply {
	shell := func(cmd string) scenarioReply {
		return scenarioReply{call: &scenarioCall{kind: callShell, command: cmd}}
	}
	switch prompt {
	case promptAllow:
		if results == 0 {
			return shell("echo one >> log.txt")
		}
		return scenarioReply{text: answerAllow}
	case promptDeny:
		if results == 0 {
			return shell("echo two >> log.txt")
		}
		return scenarioReply{text: answerDeny}
	case promptEdit:
		if readFirst {
			if results == 0 {
				return scenarioReply{call: &scenarioCall{kind: callRead, path: "notes.txt"}}
			}
			results--
		}
		if results == 0 {
			return scenarioReply{call: &scenarioCall{kind: callWrite, path: "notes.txt", old: notesBefore, content: notesProposed}}
		}
		return scenarioReply{text: answerEdit}
	case promptSleep:
		if results == 0 {
			return shell("sleep 30")
		}
		return scenarioReply{text: answerSleep}
	}
	return scenarioReply{text: answerText}
}

// scenarioPrompts are the prompts in the order the script knows them.
var scenarioPrompts = []string{promptText, promptAllow, promptDeny, promptEdit, promptSleep}

// promptIn says which scenario prompt text holds, if any.
func promptIn(text string) (string, bool) {
	for _, p := range scenarioPrompts {
		if strings.Contains(text, p) {
			return p, true
		}
	}
	return "", false
}

// anthropicFake is a fake Anthropic Messages API for kz's native runtime
// and for Claude Code: it renders the script with the tools the request
// offers (Claude Code's Bash, Read, Write; kz's bash, read_file,
// write_file) and streams it through llmtest's wire writer.
type anthropicFake struct {
	srv *httptest.Server
	// workspace is the absolute path Claude Code's file tools are given.
	workspace string
	mu        sync.Mutex
	// issued maps the id of each call the fake made to the prompt it
	// answered; its size numbers the next call.
	issued map[string]string
}

func newAnthropicFake(t *testing.T, workspace string) *anthropicFake {
	f := &anthropicFake{workspace: workspace, issued: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// anthropicRequest is the part of a Messages request the fake reads.
type anthropicRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ToolUseID string `json:"tool_use_id"`
}

func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// place finds the scenario prompt a request answers, the last one in its
// user messages, and counts the results of the calls the fake made for
// that prompt. Results are matched by call id rather than by position:
// Claude Code merges consecutive messages, so an earlier call's result can
// sit beside the next prompt, before it or after it.
func (r *anthropicRequest) place(issued map[string]string) (prompt string, results int) {
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range anthropicBlocks(m.Content) {
			if p, ok := promptIn(b.Text); ok && b.Type == "text" {
				prompt = p
			}
		}
	}
	for _, m := range r.Messages {
		for _, b := range anthropicBlocks(m.Content) {
			if b.Type == "tool_result" && prompt != "" && issued[b.ToolUseID] == prompt {
				results++
			}
		}
	}
	return prompt, results
}

func (f *anthropicFake) serve(w http.ResponseWriter, r *http.Request) {
	raw := logRequest(r)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		// Token counts and anything else the CLI probes.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":10}`)
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if len(req.Tools) == 0 {
		// A side request (a title, a summary): a small text.
		f.reply(w, req.Stream, llmtest.Reply{Text: `{"title":"kz e2e"}`})
		return
	}
	offered := map[string]bool{}
	for _, tl := range req.Tools {
		offered[tl.Name] = true
	}
	claude := offered["Bash"]
	f.mu.Lock()
	prompt, results := req.place(f.issued)
	rep := scenarioScript(prompt, results, claude)
	id := fmt.Sprintf("toolu_e2e_%d", len(f.issued)+1)
	if rep.call != nil {
		f.issued[id] = prompt
	}
	f.mu.Unlock()
	if rep.call == nil {
		f.reply(w, req.Stream, llmtest.Reply{Text: rep.text})
		return
	}
	var name string
	var input map[string]any
	c := rep.call
	switch {
	case c.kind == callShell && claude:
		name, input = "Bash", map[string]any{"command": c.command}
	case c.kind == callShell:
		name, input = "bash", map[string]any{"command": c.command}
	case c.kind == callRead && claude:
		name, input = "Read", map[string]any{"file_path": c.path}
	case c.kind == callRead:
		name, input = "read_file", map[string]any{"path": c.path}
	case c.kind == callWrite && claude:
		name, input = "Write", map[string]any{"file_path": c.path, "content": c.content}
	default:
		name, input = "write_file", map[string]any{"path": c.path, "content": c.content}
	}
	if claude && c.kind != callShell {
		// Claude Code's file tools take absolute paths.
		input["file_path"] = filepath.Join(f.workspace, c.path)
	}
	args, _ := json.Marshal(input)
	f.reply(w, req.Stream, llmtest.Reply{Calls: []llmtest.Call{{ID: id, Name: name, Args: string(args)}}})
}

// reply writes rep as a stream, or as one JSON message when the request
// did not ask for a stream.
func (f *anthropicFake) reply(w http.ResponseWriter, stream bool, rep llmtest.Reply) {
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(llmtest.Render(llm.ProviderAnthropic, rep))
		return
	}
	content := []any{}
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	stop := "end_turn"
	for _, c := range rep.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": "fake",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
}

// logRequest reads a request's body and, when KZ_E2E_FAKE_LOG names a
// file, appends the request to it: what a CLI sent is what one needs to
// see when the script goes out of step with it.
func logRequest(r *http.Request) []byte {
	raw, _ := io.ReadAll(r.Body)
	if name := os.Getenv("KZ_E2E_FAKE_LOG"); name != "" {
		if fh, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = fmt.Fprintf(fh, "%s %s\n%s\n\n", r.Method, r.URL.Path, raw)
			_ = fh.Close()
		}
	}
	return raw
}

// responsesFake is a fake OpenAI Responses API for Codex: it renders the
// script as Codex's tools (its shell tool, apply_patch) and streams it.
type responsesFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	issued map[string]string
}

func newResponsesFake(t *testing.T) *responsesFake {
	f := &responsesFake{issued: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// responsesItem is the part of a Responses input item the fake reads.
type responsesItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	CallID  string `json:"call_id"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (f *responsesFake) serve(w http.ResponseWriter, r *http.Request) {
	raw := logRequest(r)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []responsesItem `json:"input"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	prompt := ""
	for _, it := range req.Input {
		if it.Type == "message" && it.Role == "user" {
			for _, c := range it.Content {
				if p, ok := promptIn(c.Text); ok {
					prompt = p
				}
			}
		}
	}
	results := 0
	for _, it := range req.Input {
		if strings.HasSuffix(it.Type, "_output") && prompt != "" && f.issued[it.CallID] == prompt {
			results++
		}
	}
	rep := scenarioScript(prompt, results, false)
	id := fmt.Sprintf("call_e2e_%d", len(f.issued)+1)
	if rep.call != nil {
		f.issued[id] = prompt
	}
	f.mu.Unlock()
	shellTool := "exec_command"
	for _, n := range []string{"exec_command", "shell_command", "shell"} {
		if slices.ContainsFunc(req.Tools, func(tl struct {
			Name string `json:"name"`
		}) bool {
			return tl.Name == n
		}) {
			shellTool = n
			break
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	send("response.created", map[string]any{"response": map[string]any{"id": "resp_e2e"}})
	var item map[string]any
	switch {
	case rep.call != nil && rep.call.kind == callShell:
		args, _ := json.Marshal(map[string]any{"cmd": rep.call.command, "yield_time_ms": 60000})
		item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": shellTool,
			"arguments": string(args), "status": "completed"}
	case rep.call != nil:
		item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": id, "name": "apply_patch",
			"input": codexPatch(rep.call), "status": "completed"}
	default:
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_e2e",
			"role": "assistant", "status": "in_progress", "content": []any{}}})
		send("response.output_text.delta", map[string]any{"item_id": "msg_e2e", "output_index": 0, "content_index": 0, "delta": rep.text})
		item = map[string]any{"type": "message", "id": "msg_e2e", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}}
	}
	if rep.call != nil {
		send("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	send("response.completed", map[string]any{"response": map[string]any{"id": "resp_e2e", "status": "completed",
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}

// codexPatch renders a write as Codex's apply_patch grammar: an update of
// the file with one @@ section per changed line, three lines of context
// around it.
func codexPatch(c *scenarioCall) string {
	before := strings.Split(strings.TrimSuffix(c.old, "\n"), "\n")
	after := strings.Split(strings.TrimSuffix(c.content, "\n"), "\n")
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: " + c.path + "\n")
	for i := range before {
		if before[i] == after[i] {
			continue
		}
		b.WriteString("@@\n")
		for j := max(i-3, 0); j < i; j++ {
			b.WriteString(" " + before[j] + "\n")
		}
		b.WriteString("-" + before[i] + "\n+" + after[i] + "\n")
		for j := i + 1; j < min(i+4, len(before)); j++ {
			b.WriteString(" " + before[j] + "\n")
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// geminiFake is a fake Gemini API for Gemini CLI: it renders the script
// as Gemini CLI's tools (run_shell_command, read_file, write_file). A
// prompt's results are the function responses after it: Gemini CLI keeps
// its history in order.
type geminiFake struct {
	srv *httptest.Server
}

func newGeminiFake(t *testing.T) *geminiFake {
	f := &geminiFake{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *geminiFake) serve(w http.ResponseWriter, r *http.Request) {
	raw := logRequest(r)
	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		_, _ = io.WriteString(w, `{"totalTokens":10}`)
		return
	case !strings.Contains(r.URL.Path, ":streamGenerateContent") && !strings.Contains(r.URL.Path, ":generateContent"):
		http.NotFound(w, r)
		return
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             *string         `json:"text"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prompt, results := "", 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				results++
			case p.Text != nil && c.Role == "user":
				if pr, ok := promptIn(*p.Text); ok {
					prompt, results = pr, 0
				}
			}
		}
	}
	rep := scenarioScript(prompt, results, false)
	var part map[string]any
	switch {
	case rep.call == nil:
		part = map[string]any{"text": rep.text}
	case rep.call.kind == callShell:
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": rep.call.command, "description": "scenario"}}}
	case rep.call.kind == callRead:
		part = map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": rep.call.path}}}
	default:
		part = map[string]any{"functionCall": map[string]any{"name": "write_file",
			"args": map[string]any{"file_path": rep.call.path, "content": rep.call.content}}}
	}
	chunk := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "index": 0, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-flash", "responseId": "r1",
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if strings.Contains(r.URL.Path, ":generateContent") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}
