package config

import (
	"strings"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// TestPatchRetriesKey: patch_retries is read, validated (0 to
// MaxPatchRetries), mapped to the engine's convention, and an untrusted
// project may lower it but not raise it.
func TestPatchRetriesKey(t *testing.T) {
	t.Parallel()
	p := paths(t)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.PatchRetries != nil || EnginePatchRetries(c.PatchRetries) != 0 {
		t.Fatalf("unset patch_retries = %v", c.PatchRetries)
	}

	write(t, p.UserConfig, "patch_retries = 5\n")
	if c, err = Load(p); err != nil || c.PatchRetries == nil || *c.PatchRetries != 5 || EnginePatchRetries(c.PatchRetries) != 5 {
		t.Fatalf("user patch_retries 5: %v %+v", err, c)
	}

	// An untrusted project lowers it, to none at all...
	write(t, p.ProjectFile, "patch_retries = 0\n")
	if c, err = Load(p); err != nil || c.PatchRetries == nil || *c.PatchRetries != 0 || EnginePatchRetries(c.PatchRetries) != -1 {
		t.Fatalf("project patch_retries 0: %v %+v", err, c)
	}
	// ...but cannot raise it above the user's value or the default.
	write(t, p.ProjectFile, "patch_retries = 9\n")
	if c, err = Load(p); err != nil || *c.PatchRetries != 5 || !strings.Contains(strings.Join(c.Warnings, "\n"), "patch_retries 9 (above 5) ignored") {
		t.Fatalf("untrusted raise: %v %v %q", err, *c.PatchRetries, c.Warnings)
	}
	write(t, p.UserConfig, "")
	if c, err = Load(p); err != nil || c.PatchRetries != nil || !strings.Contains(strings.Join(c.Warnings, "\n"), "patch_retries 9 (above 2) ignored") {
		t.Fatalf("untrusted raise over the default: %v %+v", err, c)
	}
	if engine.DefaultPatchRetries != 2 {
		t.Fatalf("the warning above assumes the default of 2, not %d", engine.DefaultPatchRetries)
	}

	// Out of range values are errors naming the file and the key.
	write(t, p.ProjectFile, "")
	for _, bad := range []string{"patch_retries = -1\n", "patch_retries = 11\n", "patch_retries = \"two\"\n"} {
		write(t, p.UserConfig, bad)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p.UserConfig) || !strings.Contains(err.Error(), "patch_retries") && !strings.Contains(err.Error(), "PatchRetries") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
