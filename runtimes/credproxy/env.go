package credproxy

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/kaizen-code/kz/internal/childenv"
)

// Spec says where a CLI reads its credentials and endpoint from.
type Spec struct {
	// KeyVars are the variables that may hold a credential the CLI sends
	// to its endpoint. Each that is set (non-empty) gets a placeholder.
	KeyVars []string
	// BaseURLVar is the variable the CLI reads its endpoint from. When it
	// is set in the environment its value is the upstream; it is then
	// pointed at the proxy. Empty when the CLI is told its endpoint
	// another way (Codex's -c overrides): the caller uses Proxy.URL.
	BaseURLVar string
	// DefaultUpstream is the vendor's endpoint, used when BaseURLVar is
	// empty or not set.
	DefaultUpstream string
}

// Shield starts a proxy for the credentials that spec names in env and
// returns env with each replaced by its placeholder and spec.BaseURLVar
// pointing at the proxy. When env holds none of them, nothing is proxied:
// env comes back unchanged with a nil Proxy (the CLI authenticates with
// its own login, which stays its business). The caller closes the proxy
// once the CLI has exited. An error means the CLI must not be started:
// falling back to the real key would hand it to the agent's shell.
func Shield(env []string, spec Spec, log *slog.Logger) ([]string, *Proxy, error) {
	var vars, secrets []string
	for _, k := range spec.KeyVars {
		if v := childenv.Lookup(env, k); v != "" {
			vars, secrets = append(vars, k), append(secrets, v)
		}
	}
	if len(secrets) == 0 {
		return env, nil, nil
	}
	upstream := spec.DefaultUpstream
	if spec.BaseURLVar != "" {
		if v := childenv.Lookup(env, spec.BaseURLVar); v != "" {
			upstream = v
		}
	}
	if upstream == "" {
		return nil, nil, fmt.Errorf("credential proxy: no endpoint to forward %s to", strings.Join(vars, ", "))
	}
	p, err := Start(Config{Upstream: upstream, Secrets: secrets, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	out := append([]string(nil), env...)
	for i, k := range vars {
		out = childenv.Set(out, k, p.Placeholders()[i])
	}
	if spec.BaseURLVar != "" {
		out = childenv.Set(out, spec.BaseURLVar, p.URL())
	}
	return out, p, nil
}
