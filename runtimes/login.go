package runtimes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/internal/config"
	"github.com/kaizen-code/kz/runtimes/codex"
)

// LoginState is what an agent CLI's own status command said about its
// login.
type LoginState string

// Login states. LoginUnknown covers a CLI without a status command and a
// status command that failed in a way that says nothing about the login
// (a crash, a timeout): kz then lets the first turn find out.
const (
	LoginOK      LoginState = "logged-in"
	LoginMissing LoginState = "not-logged-in"
	LoginUnknown LoginState = "unknown"
)

// Login is the result of CheckLogin.
type Login struct {
	State LoginState
	// Hint says what to run, for LoginMissing: "claude is installed but
	// not logged in: run `claude auth login`".
	Hint string
}

// loginTimeout bounds one status command. Claude Code's takes seconds on
// a busy machine (it starts Node); a hung one must not hold kz runtimes.
const loginTimeout = 30 * time.Second

// CheckLogin runs the CLI's own login status command for a Claude Code
// (`claude auth status`) or Codex (`codex login status`) runtime and says
// whether it is logged in. Both print their state and exit 1 when not
// logged in (checked with the pinned versions under an empty HOME). The
// child gets the minimal environment plus the CLI's own home and key
// variables, which is what it reads its credentials from. An API key
// variable counts as a login for Codex, whose status command only knows
// its stored login while kz hands OPENAI_API_KEY to it.
func CheckLogin(ctx context.Context, rc config.Runtime) Login {
	var args []string
	var keyEnv, prefix string
	switch rc.Kind {
	case config.KindClaudeCode:
		args, keyEnv, prefix = []string{"auth", "status"}, "ANTHROPIC_API_KEY", "CLAUDE_"
	case config.KindCodex:
		args, keyEnv, prefix = []string{"login", "status"}, "OPENAI_API_KEY", "CODEX_"
	default:
		return Login{State: LoginUnknown}
	}
	if rc.Kind == config.KindCodex && os.Getenv(keyEnv) != "" {
		return Login{State: LoginOK}
	}
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	command, env := rc.Command, childenv.Build(os.Environ(), childenv.Spec{Pass: []string{keyEnv}, Prefixes: []string{prefix},
		Config: childenv.FromMap(rc.Env)})
	if rc.Kind == config.KindCodex {
		// As for a turn: the npm launcher's binary, without Node's start.
		command, env = codex.NativeCommand(command, env)
	}
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.Env = env
	// Claude Code answers in JSON on stdout; Codex says "Not logged in"
	// on stderr.
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.Bytes()
	if rc.Kind == config.KindCodex {
		out = append(out, stderr.Bytes()...)
	}
	return loginFrom(filepath.Base(rc.Command), rc.Kind, out, err, ctx.Err())
}

// loginFrom reads a status command's outcome: exit 0 is logged in; exit 1
// with the CLI's "not logged in" answer is LoginMissing; anything else is
// unknown.
func loginFrom(name string, kind config.RuntimeKind, out []byte, err, ctxErr error) Login {
	if err == nil {
		return Login{State: LoginOK}
	}
	var ee *exec.ExitError
	if ctxErr != nil || !errors.As(err, &ee) || ee.ExitCode() != 1 {
		return Login{State: LoginUnknown}
	}
	missing := false
	switch kind {
	case config.KindClaudeCode:
		var st struct {
			LoggedIn *bool `json:"loggedIn"`
		}
		missing = json.Unmarshal(out, &st) == nil && st.LoggedIn != nil && !*st.LoggedIn
	case config.KindCodex:
		missing = strings.Contains(strings.ToLower(string(out)), "not logged in")
	}
	if !missing {
		return Login{State: LoginUnknown}
	}
	login := name + " login"
	if kind == config.KindClaudeCode {
		// Claude Code 2.x signs in with `claude auth login`.
		login = name + " auth login"
	}
	return Login{State: LoginMissing, Hint: fmt.Sprintf("%s is installed but not logged in: run `%s`", name, login)}
}
