package runtimes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
)

// Builds run limit at a time, never more, and their entries come back in
// the jobs' order though later jobs end first. The first limit builds
// wait for each other before they return: one at a time, the first would
// wait alone until its deadline and the test would fail.
func TestBuildInOrderRunsBoundedInParallelInOrder(t *testing.T) {
	const limit = 3
	var jobs []buildJob
	for i := range 8 {
		jobs = append(jobs, buildJob{name: fmt.Sprintf("rt%d", i)})
	}
	var running, peak atomic.Int32
	started := make(chan struct{}, len(jobs))
	build := func(j buildJob) (engine.RuntimeEntry, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		started <- struct{}{}
		if j.name < fmt.Sprintf("rt%d", limit) {
			deadline := time.After(10 * time.Second)
			for running.Load() < limit {
				select {
				case <-deadline:
					return engine.RuntimeEntry{}, fmt.Errorf("%s: the probes ran one after another", j.name)
				case <-time.After(time.Millisecond):
				}
			}
		}
		// Later jobs end first.
		time.Sleep(time.Duration(len(jobs)-len(started)) * time.Millisecond)
		return engine.RuntimeEntry{Description: j.name}, nil
	}
	out, err := buildInOrder(jobs, limit, build)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range out {
		names = append(names, e.Description)
	}
	want := []string{"rt0", "rt1", "rt2", "rt3", "rt4", "rt5", "rt6", "rt7"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %v, want %v", names, want)
	}
	if p := peak.Load(); p != limit {
		t.Errorf("%d builds ran at once, want %d", p, limit)
	}
}

// When builds fail, the error is the first failing job's in the jobs'
// order, whichever failed first in time, and no entry is returned.
func TestBuildInOrderReturnsTheFirstErrorInOrder(t *testing.T) {
	jobs := []buildJob{{name: "ok"}, {name: "slow-bad"}, {name: "fast-bad"}, {name: "ok2"}}
	out, err := buildInOrder(jobs, 4, func(j buildJob) (engine.RuntimeEntry, error) {
		switch j.name {
		case "slow-bad":
			time.Sleep(50 * time.Millisecond)
			return engine.RuntimeEntry{}, errors.New("slow-bad failed")
		case "fast-bad":
			return engine.RuntimeEntry{}, errors.New("fast-bad failed")
		}
		return engine.RuntimeEntry{Description: j.name}, nil
	})
	if err == nil || err.Error() != "slow-bad failed" || out != nil {
		t.Fatalf("out %v, err %v; want slow-bad's error", out, err)
	}
}

// fakeCLI is a claude whose --version waits (at most five seconds) until
// three of them run at once and then says whether they did, and whose
// login status says logged in.
const fakeCLI = `#!/bin/sh
dir=${0%/*}
case "$1" in
--version)
	: > "$dir/started.$$"
	i=0
	while [ $i -lt 100 ]; do
		set -- "$dir"/started.*
		if [ $# -ge 3 ]; then echo "9.9.9-together (Claude Code)"; exit 0; fi
		/bin/sleep 0.05
		i=$((i+1))
	done
	echo "9.9.9-alone (Claude Code)"
	;;
auth) echo '{"loggedIn":true}' ;;
esac
`

// kz runtimes probes its runtimes in parallel: three configured Claude
// Code runtimes check their CLI's version at the same time, and the list
// keeps the configuration's order, then the presets' (sorted).
func TestBuildAllProbesInParallelKeepingTheOrder(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "claude")
	if err := os.WriteFile(cli, []byte(fakeCLI), 0o755); err != nil {
		t.Fatal(err)
	}
	// No real CLI or key is found for the presets.
	t.Setenv("PATH", t.TempDir())
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "")
	}
	cfg := &config.Config{RuntimeOrder: []string{"zeta", "alpha", "mid"}, Runtimes: map[string]config.Runtime{}}
	for _, n := range cfg.RuntimeOrder {
		cfg.Runtimes[n] = config.Runtime{Kind: config.KindClaudeCode, Command: cli}
	}
	entries, err := BuildAll(cfg, Options{Workspace: t.TempDir(), Probe: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Runtime.Name())
	}
	var presets []string
	for n := range Presets {
		presets = append(presets, n)
	}
	slices.Sort(presets)
	if want := append([]string{"zeta", "alpha", "mid"}, presets...); !slices.Equal(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
	for _, e := range entries[:3] {
		if e.Unavailable != "" || e.Version != "9.9.9-together" {
			t.Errorf("%s: version %q, unavailable %q: want the three probes run together", e.Runtime.Name(), e.Version, e.Unavailable)
		}
	}
}
