package tools

import "syscall"

// statMtime and statCtime are a stat's modification and change times in
// nanoseconds; the field names differ between systems.
func statMtime(s *syscall.Stat_t) int64 { return s.Mtim.Nano() }
func statCtime(s *syscall.Stat_t) int64 { return s.Ctim.Nano() }
