package mcp

import (
	"maps"
	"strings"
	"testing"
)

// ${VAR} expansion of a server's env and headers, which every runtime
// uses (the native client, Claude Code's --mcp-config, ACP's session/new):
// every reference is replaced from the given environment, the last
// setting of a variable winning; literal text and an empty value are
// kept; a missing variable fails naming the server, the key and the
// variable, the first key in order when several miss.
func TestExpandedEnvAndHeaders(t *testing.T) {
	environ := []string{"TOKEN=old", "HOST=db", "TOKEN=new", "EMPTY=", "NOEQUALS"}
	s := Spec{Name: "srv",
		Env:     map[string]string{"A": "pg://${HOST}/x?t=${TOKEN}", "B": "plain $TOKEN {TOKEN}", "C": "${EMPTY}"},
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X": "${HOST}${HOST}"}}
	env, err := s.ExpandedEnv(environ)
	if want := map[string]string{"A": "pg://db/x?t=new", "B": "plain $TOKEN {TOKEN}", "C": ""}; err != nil || !maps.Equal(env, want) {
		t.Errorf("env %v, %v; want %v", env, err, want)
	}
	h, err := s.ExpandedHeaders(environ)
	if want := map[string]string{"Authorization": "Bearer new", "X": "dbdb"}; err != nil || !maps.Equal(h, want) {
		t.Errorf("headers %v, %v; want %v", h, err, want)
	}
	if got, err := (Spec{Name: "none"}).ExpandedEnv(environ); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no env: %v, %v", got, err)
	}

	bad := Spec{Name: "srv", Env: map[string]string{"Z": "${ALSO_MISSING}", "K": "x${NOEQUALS}"},
		Headers: map[string]string{"Authorization": "Bearer ${MISSING}"}}
	if _, err := bad.ExpandedEnv(environ); err == nil || err.Error() != "mcp server srv: env K: NOEQUALS is not set" {
		t.Errorf("env error %v", err)
	}
	if _, err := bad.ExpandedHeaders(environ); err == nil || !strings.Contains(err.Error(), "header Authorization: MISSING is not set") {
		t.Errorf("header error %v", err)
	}
	// ChildEnv carries the expanded env on top of the minimal one.
	child, err := s.ChildEnv(environ)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(child, "\n"), "A=pg://db/x?t=new") {
		t.Errorf("child env %v", child)
	}
	if _, err := bad.ChildEnv(environ); err == nil {
		t.Error("ChildEnv started a server whose variable is missing")
	}
}
