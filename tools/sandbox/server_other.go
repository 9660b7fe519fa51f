//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"syscall"

	"github.com/kaizen-code/kz/engine"
)

// Sandbox servers need bubblewrap, which is Linux-only.

type serverPool struct{}

type serverCmd struct{}

func (s *Sandbox) serverEligible(Spec) bool { return false }

func (s *Sandbox) closeServers() {}

func (c *Cmd) startOnServer() (bool, error) { return false, nil }

func (c *Cmd) waitOnServer() error { return errors.New("sandbox: no servers on this system") }

func (sc *serverCmd) signal(syscall.Signal) error { return nil }

func (s *Sandbox) serverPlan(context.Context, engine.Confinement, Spec) ([]string, error) {
	return nil, errors.New("sandbox: no servers on this system")
}
