// Package hooks runs the person's hook commands at the points of a turn
// that Claude Code defines (PreToolUse, PostToolUse, UserPromptSubmit,
// Stop, SessionStart, Notification), with Claude Code's configuration
// shape, its JSON on stdin and stdout and its exit codes, so that one hook
// script works with Claude Code and with kz on every runtime.
//
// PreToolUse hooks are a stage of kz's permission gate (tools/permission):
// they see every runtime's tool calls, kz's own and those Claude Code,
// Codex and ACP agents send for approval, under Claude Code's tool names
// (see ClaudeToolName). A hook may allow, ask or deny; its allow only
// answers the gate's own "nothing allowed this" question, like an allow
// rule, and never lifts a deny rule, an ask rule, a safety check, the mode
// or the runtime's capabilities.
//
// Hooks are processes the person configured. They run with the
// credential-free environment of kz's tools (internal/childenv), in the
// workspace, in their own process group that a timeout or the turn's end
// kills, and under the session's OS sandbox where one exists (the
// Starter). Project hooks (.kz/config.toml) are only loaded once the
// folder is trusted; internal/config enforces that.
package hooks

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Event names the point of a turn a hook runs at; the names are Claude
// Code's.
type Event string

// The events kz runs hooks for.
const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	SessionStart     Event = "SessionStart"
	Notification     Event = "Notification"
)

// Events lists the events kz knows, in the order of a turn.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, Notification, PostToolUse, Stop}

// DefaultTimeout bounds a hook that sets no timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// Source says which configuration file a hook comes from.
type Source string

// Hook sources.
const (
	SourceUser    Source = "user"
	SourceProject Source = "project"
)

// Matcher is one entry of hooks.EVENT in Claude Code's settings and in
// kz's [[hooks.EVENT]] tables: the hooks run for the tools Matcher names.
type Matcher struct {
	// Matcher selects tools by name (PreToolUse, PostToolUse) or the
	// notification's kind: empty or "*" matches everything; a name or
	// names joined by "|" (letters, digits and "_" only) match exactly;
	// anything else is a regular expression searched in the name, as
	// Claude Code does ("Edit|Write", "mcp__.*", "Notebook.*").
	Matcher string `toml:"matcher" json:"matcher,omitempty"`
	// Hooks are the commands to run.
	Hooks []Command `toml:"hooks" json:"hooks"`
}

// Command is one hook command.
type Command struct {
	// Type must be "command" (or empty): kz runs no other kind.
	Type string `toml:"type" json:"type,omitempty"`
	// Command is a shell command line, run with /bin/sh -c.
	Command string `toml:"command" json:"command"`
	// Timeout is in seconds, as in Claude Code; zero means DefaultTimeout.
	Timeout float64 `toml:"timeout" json:"timeout,omitempty"`
}

// Config is the hooks table of one file: event name to matchers. The
// keys are strings so that a misspelt event is an error that names it
// rather than a table the decoder drops.
type Config map[string][]Matcher

// hook is one configured command, ready to run.
type hook struct {
	event   Event
	match   func(name string) bool
	matcher string
	command string
	timeout time.Duration
	source  Source
}

// compile checks a file's hooks and returns them ready to run. Errors
// name the event, the entry and what is wrong.
func compile(c Config, src Source) ([]hook, error) {
	var out []hook
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c)) {
		if !known(Event(name)) {
			errs = append(errs, fmt.Errorf("hooks.%s: unknown event (kz runs %s)", name, eventList()))
		}
	}
	// The events in a fixed order, each one's entries in file order: the
	// order hooks run in and are named in does not depend on a map.
	for _, ev := range Events {
		name := string(ev)
		for i, m := range c[name] {
			match, err := compileMatcher(m.Matcher)
			if err != nil {
				errs = append(errs, fmt.Errorf("hooks.%s[%d].matcher %q: %w", name, i, m.Matcher, err))
				continue
			}
			if len(m.Hooks) == 0 {
				errs = append(errs, fmt.Errorf("hooks.%s[%d]: no hooks", name, i))
			}
			for j, h := range m.Hooks {
				where := fmt.Sprintf("hooks.%s[%d].hooks[%d]", name, i, j)
				switch {
				case h.Type != "" && h.Type != "command":
					errs = append(errs, fmt.Errorf("%s: type %q is not supported (only \"command\")", where, h.Type))
				case strings.TrimSpace(h.Command) == "":
					errs = append(errs, fmt.Errorf("%s: empty command", where))
				case h.Timeout < 0 || h.Timeout > 24*3600:
					errs = append(errs, fmt.Errorf("%s: timeout %v is not between 0 and 86400 seconds", where, h.Timeout))
				default:
					t := DefaultTimeout
					if h.Timeout > 0 {
						t = time.Duration(h.Timeout * float64(time.Second))
					}
					out = append(out, hook{event: ev, match: match, matcher: m.Matcher, command: h.Command, timeout: t, source: src})
				}
			}
		}
	}
	return out, errors.Join(errs...)
}

// Validate checks a hooks table without running anything; the config
// loader calls it so that a bad hook is an error when kz starts.
func Validate(c Config) error {
	_, err := compile(c, SourceUser)
	return err
}

// simpleMatcher is a matcher Claude Code compares exactly: names joined
// by "|". The expression is compiled on first use, so that every kz process
// does not pay for it at start.
var simpleMatcher = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_|]+$`)
})

// compileMatcher turns a matcher into a predicate on a name.
func compileMatcher(m string) (func(string) bool, error) {
	switch {
	case m == "" || m == "*":
		return func(string) bool { return true }, nil
	case simpleMatcher().MatchString(m):
		names := strings.Split(m, "|")
		return func(n string) bool { return slices.Contains(names, n) }, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, fmt.Errorf("not a regular expression: %w", err)
	}
	return re.MatchString, nil
}

func known(ev Event) bool { return slices.Contains(Events, ev) }

func eventList() string {
	s := make([]string, len(Events))
	for i, e := range Events {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}
