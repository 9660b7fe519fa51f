package childenv

import (
	"slices"
	"strings"
)

// The helpers below read and change an environment list ("K=V" entries)
// the way exec does: when a name occurs more than once, the last entry
// wins.

// Lookup returns the value of key in env, or "" when it is not set.
func Lookup(env []string, key string) string {
	v, _ := lookup(env, key)
	return v
}

func lookup(env []string, key string) (string, bool) {
	v, found := "", false
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v, found = val, true
		}
	}
	return v, found
}

// Strip returns env without the named variables, for a child that must
// not see them (a CLI's --version needs no credential).
func Strip(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}

// Set returns env with key set to value: every earlier entry of key is
// removed, so no copy of an old value is left for a child to find.
func Set(env []string, key, value string) []string {
	return append(Strip(env, key), key+"="+value)
}

// FromMap turns the `env` table of a runtime's configuration into
// Spec.Config entries, in a stable order.
func FromMap(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
