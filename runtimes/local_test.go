package runtimes

import (
	"net"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/config"
)

func TestIsLocal(t *testing.T) {
	for base, want := range map[string]bool{
		"http://127.0.0.1:11434/v1": true, "http://localhost:8080": true, "http://[::1]:9/v1": true,
		"https://api.openai.com/v1": false, "": false, "http://10.0.0.2:11434": false, "::not a url": false,
	} {
		if got := isLocal(base); got != want {
			t.Errorf("isLocal(%q) = %t, want %t", base, got, want)
		}
	}
}

// TestLocalRuntimeUnavailableWhenNothingListens builds the ollama preset
// against a loopback port without Probe: with nothing listening it is
// unavailable (so kz does not pick it and shows the first-run screen),
// with a listener it is available.
func TestLocalRuntimeUnavailableWhenNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := Presets["ollama"]
	rc.BaseURL = "http://" + ln.Addr().String() + "/v1"
	e, err := Build("ollama", rc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Unavailable != "" {
		t.Fatalf("listening server reported unavailable: %s", e.Unavailable)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Build("ollama", rc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Unavailable, "is unreachable") {
		t.Fatalf("closed port: unavailable = %q", e.Unavailable)
	}
	// A remote API is not contacted without Probe.
	remote := config.Runtime{Kind: config.KindNative, Provider: "openai", BaseURL: "https://api.example.invalid/v1", APIKeyEnv: "KZ_TEST_KEY", Models: []string{"gpt-4o"}}
	t.Setenv("KZ_TEST_KEY", "sk")
	if e, err := Build("remote", remote, Options{}); err != nil || e.Unavailable != "" {
		t.Fatalf("remote runtime: %v, unavailable %q", err, e.Unavailable)
	}
}
