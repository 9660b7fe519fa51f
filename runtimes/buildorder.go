package runtimes

import (
	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/internal/config"
	"golang.org/x/sync/errgroup"
)

// probeParallelism bounds how many runtimes BuildAll builds at once. A
// build with Probe set waits on the runtime's probes: a CLI's --version
// and login status (`claude auth status` takes seconds), an endpoint's
// dial. They wait on other processes and the network rather than on this
// machine's cores, so several run at a time; the bound keeps a long
// configuration from starting a dozen CLIs together.
const probeParallelism = 4

// buildJob is one runtime BuildAll builds: its name and configuration.
type buildJob struct {
	name string
	rc   config.Runtime
}

// buildInOrder runs build for every job, at most limit at a time, and
// returns the entries in the jobs' order whatever order the builds end
// in, so that kz runtimes lists them as configured. When builds fail, the
// error is that of the first failing job in that order, as a build one
// at a time would have returned; every build has ended by then.
func buildInOrder(jobs []buildJob, limit int, build func(buildJob) (engine.RuntimeEntry, error)) ([]engine.RuntimeEntry, error) {
	out := make([]engine.RuntimeEntry, len(jobs))
	errs := make([]error, len(jobs))
	var g errgroup.Group
	g.SetLimit(max(limit, 1))
	for i, j := range jobs {
		g.Go(func() error {
			out[i], errs[i] = build(j)
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
