//go:build unix && !linux

package proc

import "errors"

// fdDir lists the process's open descriptors (fdescfs on the BSDs and
// macOS).
const fdDir = "/dev/fd"

// errNoCloseRange says this system has no call that marks a range of
// descriptors close on exec: each one is marked instead.
var errNoCloseRange = errors.New("close_range with CLOSE_RANGE_CLOEXEC is Linux's")

func closeRangeOnExec() error { return errNoCloseRange }
