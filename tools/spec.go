// Package tools holds kz's built-in tools, their specs and registry, and the
// Executor that runs a runtime's tool calls through the permission gate.
// The tools never know which runtime called them; every file access goes
// through tools/workspace.
package tools

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kaizen-code/kz/engine"
)

// Exposure says how a tool is offered to a model. The zero value is treated
// as disabled, so a spec that forgets to say is never shown.
type Exposure string

// Exposures.
const (
	// ExposureNative tools are offered to kz's native loop.
	ExposureNative Exposure = "native"
	// ExposureFunction tools are offered as function tools (also to
	// runtimes that take kz's tools as functions).
	ExposureFunction Exposure = "function"
	// ExposureRuntimeOnly tools are never shown to a model; a runtime may
	// route its own tool's approval through them.
	ExposureRuntimeOnly Exposure = "runtime-only"
	// ExposureDisabled tools are registered but never offered or run.
	ExposureDisabled Exposure = "disabled"
)

// Visible reports whether a model may see a tool with this exposure.
func (e Exposure) Visible() bool { return e == ExposureNative || e == ExposureFunction }

// ToolSpec declares a tool. Its zero value fails closed: not read-only,
// not concurrency-safe, permission required, exposure disabled.
type ToolSpec struct {
	Name string
	// Schema is the JSON schema of the input, an object schema.
	Schema json.RawMessage
	// Description is shown to the model; it comes from descriptions/<name>.md.
	Description string
	ReadOnly    bool
	Destructive bool
	// ConcurrencySafe tools may run in parallel with other read-only,
	// concurrency-safe calls of the same batch.
	ConcurrencySafe bool
	// SkipPermission is true only for tools that need no gate decision at
	// all; its zero value means the gate is asked.
	SkipPermission bool
	// MaxResultBytes is the largest result the model sees in full; a larger
	// one is stored as an artifact and the model gets a preview. Zero means
	// DefaultMaxResult.
	MaxResultBytes int
	Exposure       Exposure
}

// DefaultMaxResult is the result limit of a spec that sets none.
const DefaultMaxResult = 30000

// RequiresPermission reports whether a call must pass the gate.
func (s ToolSpec) RequiresPermission() bool { return !s.SkipPermission }

// MaxResult returns the result limit in bytes.
func (s ToolSpec) MaxResult() int {
	if s.MaxResultBytes <= 0 {
		return DefaultMaxResult
	}
	return s.MaxResultBytes
}

// Tool is one tool: its spec, and how to turn raw model input into a
// prepared call.
type Tool interface {
	Spec() ToolSpec
	// Prepare decodes input strictly and validates it against the
	// workspace. The returned Call is the single decoded value that both the
	// permission request and the execution use.
	Prepare(ctx context.Context, env *Env, input json.RawMessage) (Call, error)
}

// Call is a decoded, validated tool call ready for the gate and to run.
type Call interface {
	// Request describes the call to the gate. The Executor fills in the
	// tool call id, the tool name and the raw input.
	Request() engine.PermissionRequest
	// Run executes the call. An error is reported to the model as an error
	// result; Output may still hold partial output.
	Run(ctx context.Context, rc *RunContext) (string, error)
}

// RunContext is what a running call may use besides its Env.
type RunContext struct {
	Env        *Env
	ToolCallID string
	// Confinement is the OS sandbox profile the gate's answer gives the
	// call (a shell command runs under it); the zero value is the
	// strictest, read-only without network.
	Confinement engine.Confinement
	// Emit publishes an event of this call (file_edited, command_*,
	// tool_call_progress). It is never nil.
	Emit func(engine.Event)
	// Permit asks the gate, and the person if it asks, about something
	// the call meets while it runs (web_fetch's redirect to a new host).
	// The request is judged as this call's tool with this call's id.
	// Nil when no gate is at hand: the call must then refuse.
	Permit func(ctx context.Context, req engine.PermissionRequest) engine.Answer
	// SaveArtifact stores content as an artifact of this call and returns
	// its reference, for a tool that keeps its whole output while showing
	// the model a part; nil when the session keeps no artifacts.
	SaveArtifact func(ctx context.Context, content []byte) (string, error)
	// Spawn runs a child turn (the task tool); nil when the caller
	// cannot spawn one.
	Spawn func(ctx context.Context, req engine.ChildRequest) (engine.ChildResult, error)
}

//go:embed descriptions/*.md
var descriptionFS embed.FS

// description returns the embedded description of a tool. A missing file is
// a programming error caught by the tests, so it returns a placeholder
// rather than panicking at run time.
func description(name string) string {
	b, err := descriptionFS.ReadFile("descriptions/" + name + ".md")
	if err != nil {
		return "(no description for " + name + ")"
	}
	return strings.TrimSpace(string(b))
}

// Registry holds tools by name. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	order []string
}

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds a tool. A duplicate or unnamed tool is an error.
func (r *Registry) Register(t Tool) error {
	s := t.Spec()
	if s.Name == "" {
		return errors.New("register tool: empty name")
	}
	if len(s.Schema) > 0 && !json.Valid(s.Schema) {
		return fmt.Errorf("register tool %s: schema is not valid JSON", s.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[s.Name]; dup {
		return fmt.Errorf("register tool %s: already registered", s.Name)
	}
	r.tools[s.Name] = t
	r.order = append(r.order, s.Name)
	return nil
}

// Lookup returns the tool with that name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns every registered name in registration order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// List returns the specs a model may see in mode: visible tools, and in
// analysis-only and patch-proposal modes only read-only ones.
func (r *Registry) List(mode engine.Mode) []ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []ToolSpec
	for _, n := range r.order {
		s := r.tools[n].Spec()
		if !s.Exposure.Visible() {
			continue
		}
		if mode != engine.ModeFullAutonomous && !s.ReadOnly {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Filter returns a new registry without the tools for which denied returns
// true, so a deny rule removes a tool before the model sees it.
func (r *Registry) Filter(denied func(name string) bool) *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &Registry{tools: map[string]Tool{}}
	for _, n := range r.order {
		if denied != nil && denied(n) {
			continue
		}
		out.tools[n] = r.tools[n]
		out.order = append(out.order, n)
	}
	return out
}

// DecodeStrict decodes a JSON object into v (a pointer to a struct) and
// fails on anything ambiguous: input that is not one object, unknown or
// differently-cased fields, duplicate keys, wrong types and trailing data.
// Field names must match the struct's json tags exactly, because
// encoding/json would otherwise match "PATH" to "path" and a duplicate key
// could show the gate one value and the tool another.
func DecodeStrict(input json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errors.New("tool input must be a JSON object")
	}
	if err := checkKeys(trimmed, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid tool input: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid tool input: trailing data after the JSON object")
	}
	return nil
}

// checkKeys walks the top-level keys of an object and rejects duplicates
// and keys that are not exactly a json tag of v's struct type.
func checkKeys(obj []byte, v any) error {
	allowed := map[string]bool{}
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return fmt.Errorf("decode: %T is not a pointer to a struct", v)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		allowed[name] = true
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // the opening brace
		return fmt.Errorf("invalid tool input: %w", err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("invalid tool input: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("invalid tool input: expected a key")
		}
		if !allowed[key] {
			return fmt.Errorf("invalid tool input: unknown field %q", key)
		}
		if seen[key] {
			return fmt.Errorf("invalid tool input: duplicate field %q", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("invalid tool input: field %q: %w", key, err)
		}
	}
	return nil
}
