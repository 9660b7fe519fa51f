//go:build linux

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
	"github.com/kaizen-code/kz/tools/sandbox"
)

// TestBashHardStopSkipsTheGrace: a command whose whole tree ignores SIGTERM
// outlives the polite stop for the grace period, and the hard stop (the
// person's second interrupt) kills it at once, unconfined, on a bubblewrap
// sandbox server and under Landlock alike. Nothing of it is left.
func TestBashHardStopSkipsTheGrace(t *testing.T) {
	for i, mech := range []sandbox.Kind{sandbox.KindNone, sandbox.KindBubblewrap, sandbox.KindLandlock} {
		t.Run(string(mech), func(t *testing.T) {
			f := newFixture(t)
			if mech != sandbox.KindNone {
				f.withSandbox(t, mech)
				f.answerWith(wsConf)
			}
			f.env.KillGrace = 30 * time.Second
			token := fmt.Sprintf("53%d.%d", i, os.Getpid()%1000)
			in, _ := json.Marshal(map[string]any{"command": "trap '' TERM INT; sleep " + token + " & echo up > started; while :; do sleep 0.05; done"})
			hard, kill := context.WithCancel(context.Background())
			defer kill()
			soft, stop := context.WithCancel(hard)
			defer stop()
			done := make(chan []ToolResult, 1)
			go func() {
				done <- f.ex.Execute(WithHardStop(soft, hard), f.perm, f.rec, []ToolCall{{ID: "hard", Name: "bash", Input: in}})
			}()
			// The command line holds the token before the trap is set:
			// the file says the trap is.
			started := filepath.Join(f.ws.Dir(), "started")
			for deadline := time.Now().Add(10 * time.Second); !exists(started) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if !exists(started) || !processWith(token) {
				t.Fatal("the command did not start")
			}
			stop()
			time.Sleep(300 * time.Millisecond)
			if !processWith(token) {
				kill()
				t.Fatalf("the command died of SIGTERM; the test proves nothing: %+v", <-done)
			}
			select {
			case res := <-done:
				t.Fatalf("the call ended within the grace: %+v", res)
			default:
			}
			start := time.Now()
			kill()
			var res []ToolResult
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the hard stop did not end the call")
			}
			// pipeDrain bounds the wait for output a killed tree leaves.
			if took := time.Since(start); took > pipeDrain+time.Second {
				t.Errorf("the hard stop took %s", took)
			}
			if !res[0].IsError || !strings.Contains(res[0].Output, "interrupted") {
				t.Errorf("result %+v", res[0])
			}
			if fin := f.rec.ofType(engine.EventToolCallFinished); len(fin) != 1 || fin[0].Status != engine.ToolStatusInterrupted {
				t.Errorf("finished = %+v", fin)
			}
			waitGone(t, token)
		})
	}
}
