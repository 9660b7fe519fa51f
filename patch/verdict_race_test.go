//go:build linux

package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// raceRounds is how many proposals each racing test validates and
// applies while the swapper runs.
const raceRounds = 300

// TestRacingSwapperNeverWritesThroughALink validates and applies hundreds
// of proposals (a modification, a creation, a deletion in turn) in a
// directory d while a goroutine exchanges d with a link to .git/hooks (or
// to a directory outside) as fast as it can, atomically
// (RENAME_EXCHANGE), so d is at every instant either the real directory
// or the link. Every round is followed by at least one exchange. No write
// may ever land where the link leads; every refusal must be a validation
// refusal or ErrChanged (never a failed rollback); and at the end the
// real directory holds exactly the changes that were reported applied,
// with no temporary file and no journal left.
func TestRacingSwapperNeverWritesThroughALink(t *testing.T) {
	for _, target := range []string{".git/hooks", "@outside"} {
		t.Run(strings.TrimPrefix(strings.ReplaceAll(target, "/", "_"), "@"), func(t *testing.T) {
			raceSwapper(t, target)
		})
	}
}

func raceSwapper(t *testing.T, target string) {
	ctx := context.Background()
	e := newGapEnv(t)
	writeFiles(t, e.work, map[string]string{"d/f.txt": "round 0\n"})
	must(t, os.Symlink(e.target(target), e.p("dlink")))
	guarded := e.target(target)
	if !filepath.IsAbs(guarded) {
		guarded = e.p(guarded)
	}
	sealed := fsState(t, guarded)
	home := fsState(t, e.home)

	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, e.p("d"), unix.AT_FDCWD, e.p("dlink"), unix.RENAME_EXCHANGE)
	}
	if err := exchange(); err != nil {
		t.Skipf("RENAME_EXCHANGE is not available here: %v", err)
	}
	var swaps atomic.Int64
	var swapErr atomic.Value
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := exchange(); err != nil {
				swapErr.Store(err)
				return
			}
			swaps.Add(1)
			// Let the applier run between two exchanges, so rounds meet
			// the directory in both states.
			runtime.Gosched()
		}
	}()
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
			<-done
		}
	}
	defer halt()

	cur := "round 0"
	created := map[string]bool{}
	var applied, refused, changed int
	for i := 1; i <= raceRounds; i++ {
		var text, newName string
		var gone string
		switch i % 3 {
		case 0:
			text = SR3("d/f.txt", cur, fmt.Sprintf("round %d", i))
		case 1:
			newName = fmt.Sprintf("new-%d.txt", i)
			text = fmt.Sprintf("*** Begin Patch\n*** Add File: d/%s\n+%d\n*** End Patch\n", newName, i)
		default:
			for name := range created {
				gone = name
				break
			}
			if gone == "" {
				continue
			}
			text = fmt.Sprintf("*** Begin Patch\n*** Delete File: d/%s\n*** End Patch\n", gone)
		}
		p, err := Parse(text)
		must(t, err)
		plan, err := e.a.Validate(ctx, p)
		if err == nil {
			_, err = e.a.Apply(ctx, plan)
			if err != nil && !errors.Is(err, ErrChanged) {
				halt()
				t.Fatalf("round %d: apply failed otherwise than by a changed path: %v", i, err)
			}
			if err != nil {
				changed++
			}
		} else if !errors.Is(err, ErrRefused) {
			halt()
			t.Fatalf("round %d: validate: %v", i, err)
		}
		switch {
		case err != nil:
			refused++
		case i%3 == 0:
			cur = fmt.Sprintf("round %d", i)
		case newName != "":
			created[newName] = true
		default:
			delete(created, gone)
		}
		if err == nil {
			applied++
		}
		sameState(t, fmt.Sprintf("round %d: where the link leads", i), fsState(t, guarded), sealed)
		if t.Failed() {
			halt()
			t.FailNow()
		}
		// At least one exchange between two rounds, so every round races.
		for n := swaps.Load(); swaps.Load() == n && swapErr.Load() == nil; {
			runtime.Gosched()
		}
	}
	halt()
	if err, _ := swapErr.Load().(error); err != nil {
		t.Fatalf("swapper: %v", err)
	}
	if info, err := os.Lstat(e.p("d")); err == nil && info.Mode()&os.ModeSymlink != 0 {
		must(t, exchange())
	}
	t.Logf("%s: %d swaps, %d applied, %d refused (%d by a changed path at apply)", target, swaps.Load(), applied, refused, changed)

	sameState(t, "where the link leads", fsState(t, guarded), sealed)
	sameState(t, "home", fsState(t, e.home), home)
	want := map[string]string{".": "dir", "f.txt": fmt.Sprintf("file 644 %q", cur+"\n")}
	for name := range created {
		want[name] = fmt.Sprintf("file 644 %q", strings.TrimSuffix(strings.TrimPrefix(name, "new-"), ".txt")+"\n")
	}
	sameState(t, "the real directory", fsState(t, e.p("d")), want)
	e.noJournal(t)
}
