package config

import (
	"strings"
	"testing"
)

// TestLoadWebSearch: web_search is a boolean of a runtime entry; another
// type is an error naming the file and line.
func TestLoadWebSearch(t *testing.T) {
	t.Parallel()
	p := paths(t)
	write(t, p.UserConfig, "[runtimes.a]\nkind = \"native\"\nprovider = \"anthropic\"\nmodels = [\"claude-sonnet-4-5\"]\nweb_search = true\n")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Runtimes["a"].WebSearch {
		t.Errorf("web_search not read: %+v", c.Runtimes["a"])
	}
	p = paths(t)
	write(t, p.UserConfig, "[runtimes.a]\nkind = \"native\"\nprovider = \"anthropic\"\nweb_search = \"yes\"\n")
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "config.toml:4") {
		t.Errorf("web_search = \"yes\": %v", err)
	}
}
