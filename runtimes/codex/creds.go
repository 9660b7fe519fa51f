package codex

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/credproxy"
)

// How Codex 0.169.0's app-server takes its credential (verified against a
// fake Responses API):
//
//   - With its built-in "openai" provider it sends only the login stored in
//     CODEX_HOME/auth.json. It ignores OPENAI_API_KEY, CODEX_API_KEY
//     (honoured by `codex exec` only) and OPENAI_BASE_URL; the endpoint
//     is the openai_base_url setting.
//   - A provider of the config (model_providers.<id>) sends the variable
//     its env_key names as Authorization: Bearer to its base_url.
//
// So kz never gives Codex a real key: a key in kz's environment is sent
// through a credential proxy as a provider kz defines with -c overrides
// (env_key holding the placeholder, base_url the proxy), and a configured
// provider's env_key variable is proxied with its base_url overridden the
// same way. A person logged in through Codex itself (auth.json) keeps that
// login, which stays Codex's business.

// builtinKeyVars are the variables a key for the built-in provider may be
// in, in the order kz prefers them.
var builtinKeyVars = []string{"CODEX_API_KEY", "OPENAI_API_KEY"}

// proxyProvider is the id of the provider kz defines for a key from its
// environment.
const proxyProvider = "kz-openai"

// defaultUpstream is OpenAI's endpoint for the Responses API.
const defaultUpstream = "https://api.openai.com/v1"

// providerID is what a provider id must look like to be named in a -c
// override without quoting.
// providerID is compiled on first use, so that every kz process does not pay
// for it at start.
var providerID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// codexConfig is the part of config.toml kz reads.
type codexConfig struct {
	ModelProvider  string                    `toml:"model_provider"`
	Profile        string                    `toml:"profile"`
	OpenAIBaseURL  string                    `toml:"openai_base_url"`
	ModelProviders map[string]providerConfig `toml:"model_providers"`
	Profiles       map[string]struct {
		ModelProvider string `toml:"model_provider"`
	} `toml:"profiles"`
}

type providerConfig struct {
	BaseURL string `toml:"base_url"`
	EnvKey  string `toml:"env_key"`
}

// shielded is how one Codex process is started: its environment, the -c
// overrides placed before "app-server", and the proxy to close once it
// has exited (nil when nothing is proxied).
type shielded struct {
	env   []string
	args  []string
	proxy *credproxy.Proxy
}

// shield prepares the environment and overrides of a Codex process started
// with env and the configured args, so that it holds no real key. Codex's
// own login (auth.json) stays its business: kz's sandbox leaves the CLI's
// home, where it lives, visible and writable to it.
func shield(env, args []string, log *slog.Logger) (shielded, error) {
	home := codexHome(env)
	cfg, err := readConfig(filepath.Join(home, "config.toml"))
	if err != nil {
		// Codex would refuse the same file; kz proxies nothing and lets
		// Codex report it, but hands it no key either.
		log.Warn("codex: reading its config", "err", err)
	}
	id := activeProvider(cfg, args)
	if id != "openai" {
		pc, ok := cfg.ModelProviders[id]
		// Keys for the built-in provider are of no use to another one,
		// unless it names one of them as its own.
		for _, k := range builtinKeyVars {
			if k != pc.EnvKey {
				env = childenv.Strip(env, k)
			}
		}
		if !ok || pc.EnvKey == "" || childenv.Lookup(env, pc.EnvKey) == "" {
			return shielded{env: env}, nil
		}
		if pc.BaseURL == "" || !providerID().MatchString(id) {
			// kz cannot point this provider at a proxy: the key is not
			// handed over rather than handed to the agent's shell.
			log.Warn("codex: not passing the provider's key, which kz cannot proxy", "provider", id, "env_key", pc.EnvKey)
			return shielded{env: childenv.Strip(env, pc.EnvKey)}, nil
		}
		out, p, err := credproxy.Shield(env, credproxy.Spec{KeyVars: []string{pc.EnvKey}, DefaultUpstream: pc.BaseURL}, log)
		if err != nil {
			return shielded{}, err
		}
		return shielded{env: out, proxy: p, args: override("model_providers."+id+".base_url", p.URL())}, nil
	}
	var keyVar string
	for _, k := range builtinKeyVars {
		if childenv.Lookup(env, k) != "" {
			keyVar = k
			break
		}
	}
	if keyVar == "" || hasLogin(home) {
		// Codex uses its own login (or none); the variables it ignores
		// are not left for the agent's shell to find.
		return shielded{env: childenv.Strip(env, builtinKeyVars...)}, nil
	}
	upstream := cfg.OpenAIBaseURL
	if upstream == "" {
		upstream = childenv.Lookup(env, "OPENAI_BASE_URL")
	}
	if upstream == "" {
		upstream = defaultUpstream
	}
	key := childenv.Lookup(env, keyVar)
	env = childenv.Set(childenv.Strip(env, builtinKeyVars...), "OPENAI_API_KEY", key)
	out, p, err := credproxy.Shield(env, credproxy.Spec{KeyVars: []string{"OPENAI_API_KEY"}, DefaultUpstream: upstream}, log)
	if err != nil {
		return shielded{}, err
	}
	pfx := "model_providers." + proxyProvider + "."
	var a []string
	a = append(a, override(pfx+"name", "OpenAI (through kz)")...)
	a = append(a, override(pfx+"base_url", p.URL())...)
	a = append(a, override(pfx+"env_key", "OPENAI_API_KEY")...)
	a = append(a, override(pfx+"wire_api", "responses")...)
	a = append(a, override("model_provider", proxyProvider)...)
	return shielded{env: out, proxy: p, args: a}, nil
}

// override is a -c flag setting key to the TOML string value.
func override(key, value string) []string {
	return []string{"-c", key + "=" + strconv.Quote(value)}
}

// codexHome is Codex's home in env: CODEX_HOME, else ~/.codex.
func codexHome(env []string) string {
	if h := childenv.Lookup(env, "CODEX_HOME"); h != "" {
		return h
	}
	home := childenv.Lookup(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".codex")
}

// hasLogin reports whether Codex keeps a login of its own.
func hasLogin(home string) bool {
	_, err := os.Stat(filepath.Join(home, "auth.json"))
	return err == nil
}

// readConfig reads config.toml; a missing file is an empty config.
func readConfig(path string) (codexConfig, error) {
	var cfg codexConfig
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("codex config: %w", err)
	}
	if err := toml.Unmarshal(b, &cfg); err != nil {
		return codexConfig{}, fmt.Errorf("codex config %s: %w", path, err)
	}
	return cfg, nil
}

// activeProvider is the provider Codex will use: a -c model_provider
// override of the configured arguments, else the selected profile's, else
// the config's, else the built-in "openai".
func activeProvider(cfg codexConfig, args []string) string {
	profile, provider := cfg.Profile, ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-c" || a == "--config") && i+1 < len(args):
			i++
			// The last override of a key wins, as in Codex.
			k, v, ok := strings.Cut(args[i], "=")
			if ok && strings.TrimSpace(k) == "model_provider" {
				provider = unquote(v)
			}
		case (a == "-p" || a == "--profile") && i+1 < len(args):
			i++
			profile = args[i]
		case strings.HasPrefix(a, "--profile="):
			profile = strings.TrimPrefix(a, "--profile=")
		}
	}
	if provider != "" {
		return provider
	}
	if p, ok := cfg.Profiles[profile]; ok && p.ModelProvider != "" {
		return p.ModelProvider
	}
	if cfg.ModelProvider != "" {
		return cfg.ModelProvider
	}
	return "openai"
}

// unquote strips TOML string quotes from a -c value.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
