//go:build unix && !linux

package proc

// fdDir lists the process's open descriptors (fdescfs on the BSDs and
// macOS).
const fdDir = "/dev/fd"

// closeRangeOnExec reports that this system has no call that marks a
// range of descriptors close on exec: each one is marked instead.
func closeRangeOnExec() (tried bool, err error) { return false, nil }
