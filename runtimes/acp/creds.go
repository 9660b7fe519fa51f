package acp

import (
	"os"
	"path/filepath"

	"github.com/kaizen-code/kz/internal/childenv"
	"github.com/kaizen-code/kz/runtimes/credproxy"
)

// Gemini CLI's endpoints (its bundle's defaults).
const (
	geminiUpstream   = "https://generativelanguage.googleapis.com"
	vertexUpstream   = "https://aiplatform.googleapis.com"
	vertexUSUpstream = "https://aiplatform.us.rep.googleapis.com"
	vertexEUUpstream = "https://aiplatform.eu.rep.googleapis.com"
)

// geminiCredentials is where Gemini CLI 0.61 reads its key and endpoint
// (from its bundle, and verified against a fake API for the first case):
// with the Gemini API, GEMINI_API_KEY sent as x-goog-api-key (or
// Authorization: Bearer with GEMINI_API_KEY_AUTH_MECHANISM=bearer) to
// GOOGLE_GEMINI_BASE_URL; with GOOGLE_GENAI_USE_VERTEXAI=true,
// GOOGLE_API_KEY to GOOGLE_VERTEX_BASE_URL, else to Vertex AI's global
// endpoint, or the regional one GOOGLE_CLOUD_LOCATION "us" or "eu" picks.
// Both keys are proxied in either mode, so that the one Gemini does not
// use does not reach its shell either.
func geminiCredentials(env []string) credproxy.Spec {
	keys := []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
	if childenv.Lookup(env, "GOOGLE_GENAI_USE_VERTEXAI") != "true" {
		return credproxy.Spec{KeyVars: keys, BaseURLVar: "GOOGLE_GEMINI_BASE_URL", DefaultUpstream: geminiUpstream}
	}
	up := vertexUpstream
	switch childenv.Lookup(env, "GOOGLE_CLOUD_LOCATION") {
	case "us":
		up = vertexUSUpstream
	case "eu":
		up = vertexEUUpstream
	}
	return credproxy.Spec{KeyVars: keys, BaseURLVar: "GOOGLE_VERTEX_BASE_URL", DefaultUpstream: up}
}

// geminiHomes are the directories Gemini CLI writes its state to (sessions,
// history, its installation id): the .gemini directory of GEMINI_CLI_HOME,
// else of HOME. The overlay home kz may give it is added by Run.
func geminiHomes(env []string) []string {
	home := childenv.Lookup(env, "GEMINI_CLI_HOME")
	if home == "" {
		home = childenv.Lookup(env, "HOME")
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return []string{filepath.Join(home, geminiDir)}
}
