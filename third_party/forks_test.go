package thirdparty

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/genai"
)

// The glamour and genai forks drop what turned off the linker's dead-code
// elimination of methods for the whole program (see README.md): a
// reachable text/template Execute (glamour's formats; golang.org/x/net/trace
// in gRPC, which genai's Vertex AI authentication linked) or go-cmp (genai's
// replay client). These tests hold the forks to upstream's behaviour where
// kz uses them, to a clear error where they left something out, and kz's
// import graph to staying free of those packages.

// TestLinkedPackagesKeepMethodElimination lists what kz links and refuses
// the packages known to call reflect's Method or MethodByName with a name
// the linker cannot see: one of them anywhere in the program keeps every
// exported method of every type, about 40 MB of kz's binary.
func TestLinkedPackagesKeepMethodElimination(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/kaizen-code/kz").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := map[string]string{
		"text/template":                          "Execute looks up methods by name",
		"html/template":                          "it executes text/template",
		"golang.org/x/net/trace":                 "its init renders html/template",
		"google.golang.org/grpc":                 "it links golang.org/x/net/trace",
		"github.com/google/go-cmp/cmp":           "its Path.String looks up methods",
		"cloud.google.com/go/auth/credentials":   "it links gRPC through s2a",
		"cloud.google.com/go/auth/httptransport": "it links gRPC and OpenTelemetry's otelhttp",
	}
	for _, p := range strings.Fields(string(out)) {
		if why, ok := banned[p]; ok {
			t.Errorf("kz links %s (%s): the linker would keep every exported method of every type", p, why)
		}
	}
}

// TestGlamourForkFormats renders an image, whose token is its URL as
// upstream's template gets it, through formats kz's styles use and some
// they do not.
func TestGlamourForkFormats(t *testing.T) {
	style := func(image string) gansi.StyleConfig {
		return gansi.StyleConfig{Image: gansi.StylePrimitive{Format: image}}
	}
	for format, want := range map[string]string{
		"Image: {{.text}} →":      "Image: https://example.com/logo.png →",
		"[{{ .text }}|{{.text}}]": "[https://example.com/logo.png|https://example.com/logo.png]",
		"no action":               "no action",
	} {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(style(format)), glamour.WithWordWrap(80))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Render("![logo](https://example.com/logo.png)\n")
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		if !strings.Contains(ansi.Strip(got), want) {
			t.Errorf("format %q rendered %q, want it to contain %q", format, ansi.Strip(got), want)
		}
	}
	// What upstream's template would have run is an error, not printed as
	// is and not half done.
	for _, format := range []string{"{{.text | ToUpper}}", "{{.text", "{{Left .text 2}}"} {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(style(format)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Render("![logo](x.png)\n"); err == nil {
			t.Errorf("format %q rendered %q, want an error", format, got)
		}
	}
}

// TestGenaiForkGeminiAPI drives the fork as kz does: the Gemini API with
// an API key, against a local server.
func TestGenaiForkGeminiAPI(t *testing.T) {
	var gotKey, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey, gotPath = r.Header.Get("x-goog-api-key"), r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": "pong"}}},
			"finishReason": "STOP",
		}}})
	}))
	defer srv.Close()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("ping"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "pong" || gotKey != "test-key" || !strings.HasSuffix(gotPath, "/models/gemini-test:generateContent") {
		t.Errorf("text %q, key %q, path %q", resp.Text(), gotKey, gotPath)
	}
}

// TestGenaiForkVertexNeedsWhatItLeftOut: the Vertex AI paths that needed
// application default credentials or auth's transport fail with a message
// saying so, at client creation.
func TestGenaiForkVertexNeedsWhatItLeftOut(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	_, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		Backend: genai.BackendVertexAI, Project: "p", Location: "us-central1",
	})
	if err == nil || !strings.Contains(err.Error(), "application default credentials are not supported") {
		t.Errorf("Vertex AI without credentials: err = %v", err)
	}
	var cc genai.ClientConfig
	if err := cc.UseDefaultCredentials(); err == nil || !strings.Contains(err.Error(), "application default credentials") {
		t.Errorf("UseDefaultCredentials: err = %v", err)
	}
}
