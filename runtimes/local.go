package runtimes

import (
	"net"
	"net/url"
	"strings"
)

// isLocal reports a base URL on this machine, such as a local Ollama
// server. Checking that such a server listens costs one loopback
// connection, which is refused at once when nothing listens, so Build
// checks it even without Options.Probe: a local runtime whose server is
// not running is then unavailable (and the first-run screen shows) instead
// of being chosen and failing its first turn.
func isLocal(base string) bool {
	if base == "" {
		return false
	}
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
