// Package childenv builds the environment of every process kz starts: the
// bash tool's commands, patch verification commands, the sandbox's own
// helpers and the agent CLIs (SECURITY.md rule 5). One rule holds for all
// of them: a child sees the Base variables of kz's environment and what
// its caller names in a Spec, and never a variable whose name says it
// holds a secret (KEY, SECRET, TOKEN, PASSWORD) unless that name is given
// exactly. Keeping the rule in one place is the point: a security rule
// kept in several places drifts.
package childenv

import (
	"slices"
	"strings"
)

// Spec is what one kind of child gets besides Base. The zero Spec is the
// minimal environment of a shell command.
type Spec struct {
	// Pass names more variables taken from kz's environment when set: a
	// CLI's own home, proxies, certificate authorities, the variables a
	// person allowed for bash. Pass is the only way, with a bare Config
	// entry, for a name that looks like a secret to reach a child.
	Pass []string
	// Prefixes pass every variable of kz's environment whose name starts
	// with one of them and does not look like a secret: a family of
	// settings a CLI reads (CLAUDE_, ANTHROPIC_).
	Prefixes []string
	// Defaults are "K=V" entries for the variables that neither kz's
	// environment (through Base, Pass or Prefixes) nor Config sets.
	Defaults []string
	// Config is a runtime's configured environment, applied last: "K=V"
	// sets K, a bare "K" passes K from kz's environment when it is set
	// there (how a person hands a credential over).
	Config []string
}

// Base names the variables every child gets from kz's environment when
// kz has them: who and where the person is, how programs are found, the
// locale, time zone and terminal type, and the temp dir. None of them
// holds a credential.
var Base = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ"}

// DefaultPath is a child's PATH when neither kz's environment nor the
// Spec gives one: a shell without PATH finds nothing.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// Build returns the environment of a child from environ (kz's own, as
// os.Environ returns it) and s: the variables that pass, then the
// defaults, then the configured entries, each name once with its last
// value, in the order the names first appeared.
func Build(environ []string, s Spec) []string {
	var e envBuilder
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && s.passes(k) {
			e.set(k, v)
		}
	}
	for _, kv := range s.Defaults {
		if k, v, _ := strings.Cut(kv, "="); !e.has(k) {
			e.set(k, v)
		}
	}
	for _, kv := range s.Config {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			if v, ok = lookup(environ, k); !ok {
				continue
			}
		}
		if k != "" {
			e.set(k, v)
		}
	}
	if !e.has("PATH") {
		e.set("PATH", DefaultPath)
	}
	return e.list()
}

// passes reports whether the variable k of kz's environment reaches the
// child: named exactly in Pass, or, when its name does not look like a
// secret, in Base or under one of the Prefixes.
func (s Spec) passes(k string) bool {
	if slices.Contains(s.Pass, k) {
		return true
	}
	if Secret(k) {
		return false
	}
	if slices.Contains(Base, k) {
		return true
	}
	for _, p := range s.Prefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Secret reports whether an environment variable's name says it holds a
// secret: it contains KEY, SECRET, TOKEN or PASSWORD, in any case.
func Secret(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// envBuilder collects variables, each name once, in the order their names
// were first set.
type envBuilder struct {
	vals  map[string]string
	order []string
}

func (e *envBuilder) set(k, v string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[k]; !ok {
		e.order = append(e.order, k)
	}
	e.vals[k] = v
}

func (e *envBuilder) has(k string) bool {
	_, ok := e.vals[k]
	return ok
}

func (e *envBuilder) list() []string {
	out := make([]string, 0, len(e.order))
	for _, k := range e.order {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}
