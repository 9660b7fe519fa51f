package llm

import (
	"fmt"

	"github.com/kaizen-code/kz/engine/config"
)

// ConfigFrom maps a configured runtime entry (kind = "native" or
// "completion") onto a client configuration: provider, base_url,
// api_key_env and timeout. Retries keep their defaults.
func ConfigFrom(rc config.Runtime) (Config, error) {
	p, err := ParseProvider(rc.Provider)
	if err != nil {
		return Config{}, fmt.Errorf("provider: %w", err)
	}
	return Config{Provider: p, BaseURL: rc.BaseURL, APIKeyEnv: rc.APIKeyEnv, Timeout: rc.Timeout.Duration}, nil
}
