package proc

import (
	"os/exec"
	"testing"
)

// BenchmarkMarked is the scan of /proc that a SIGKILL to a tree outside
// a PID namespace of its own pays (Tree.Signal), with 300 more processes
// running than the machine had, as on a desktop: each op reads every
// process's environment once. A tree in its own PID namespace skips it.
func BenchmarkMarked(b *testing.B) {
	var cmds []*exec.Cmd
	b.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	for range 300 {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	tree := Tree{Pgid: 1 << 22, Marker: NewMarker("KZ_PROC_BENCH")}
	for b.Loop() {
		if m := tree.Marked(); len(m) != 0 {
			b.Fatalf("marked %v", m)
		}
	}
}
