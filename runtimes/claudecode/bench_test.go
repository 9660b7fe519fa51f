package claudecode

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// BenchmarkLineToSubscriber measures the latency from a line written on the
// (fake) CLI's stdout to the matching text_delta at a session subscriber.
// Each line carries its send time; the lines are paced 100 µs apart like a
// fast token stream. Reported: p50 and p99 in microseconds (target: p99 ≤
// 1000).
//
//	go test -run '^$' -bench LineToSubscriber -benchtime=2000x ./runtimes/claudecode/
func BenchmarkLineToSubscriber(b *testing.B) {
	f := newFakeB(b, []scriptLine{
		host(`{"type":"user"}`),
		cli(`{"type":"system","subtype":"init","session_id":"bench"}`),
		{Dir: "fake", Op: "stream", Count: b.N, Every: 100},
		cli(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"bench"}`),
	})
	var mu sync.Mutex
	var lat []time.Duration
	j := &memJournal{}
	s, err := engine.NewSession(engine.Config{Workspace: f.rt.cfg.Workspace, Journal: j, Runtimes: []engine.RuntimeEntry{{Runtime: f.rt}}, Interactive: true})
	if err != nil {
		b.Fatal(err)
	}
	sub := s.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				return
			}
			now := time.Now()
			if ev.Type != engine.EventTextDelta {
				continue
			}
			// A merged delta holds several stamps; the first is the
			// oldest, so its latency is the batch's worst.
			first, _, _ := strings.Cut(ev.Text, ";")
			ns, err := strconv.ParseInt(first, 10, 64)
			if err != nil {
				continue
			}
			mu.Lock()
			lat = append(lat, now.Sub(time.Unix(0, ns)))
			mu.Unlock()
		}
	}()
	b.ResetTimer()
	final, err := s.RunTurn(context.Background(), "go")
	b.StopTimer()
	cancel()
	sub.Close()
	<-done
	_ = s.Close(context.Background())
	_ = f.rt.Close()
	if err != nil || final.Status != string(engine.StatusComplete) {
		b.Fatalf("turn: %v %+v", err, final)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("no deltas measured")
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50_us")
	b.ReportMetric(q(0.99), "p99_us")
	b.ReportMetric(float64(len(lat)), "events")
}

// BenchmarkRealWallTime compares one plain-text turn of the real CLI driven
// by kz (spawn, turn, exit) with the same CLI run on its own with the same
// flags and fake conversation. Reported: the mean of each and kz's
// overhead in percent (target: ≤ 5).
//
//	go test -run '^$' -bench RealWallTime -benchtime=5x ./runtimes/claudecode/
func BenchmarkRealWallTime(b *testing.B) {
	api := newFakeAPI(b, func(*apiRequest) fakeReply { return fakeReply{Text: "Hello from the fake model."} })
	rt, ws := realSetup(b, api)
	bin := realClaude(b)
	env := buildEnv(rt.cfg.Env)
	direct := func() {
		cmd := exec.Command(bin, append(append([]string{}, baseArgs...), "--permission-mode", "default")...)
		cmd.Dir, cmd.Env = ws, env
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		_, _ = stdin.Write(append(mustJSON(newUserLine("Say hello")), '\n'))
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), `{"type":"result"`) {
				break
			}
		}
		_ = stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("claude alone: %v", err)
		}
	}
	var viaKz, alone time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		direct()
		alone += time.Since(start)

		j := &memJournal{}
		s, err := engine.NewSession(engine.Config{Workspace: ws, Journal: j, Runtimes: []engine.RuntimeEntry{{Runtime: rt}}, Interactive: true})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		final, err := s.RunTurn(context.Background(), "Say hello")
		rt.CloseSession(s.ID())
		viaKz += time.Since(start)
		_ = s.Close(context.Background())
		if err != nil || final.Status != string(engine.StatusComplete) {
			b.Fatalf("kz turn: %v %+v", err, final)
		}
	}
	b.ReportMetric(float64(alone.Milliseconds())/float64(b.N), "alone_ms")
	b.ReportMetric(float64(viaKz.Milliseconds())/float64(b.N), "kz_ms")
	b.ReportMetric(100*(float64(viaKz)-float64(alone))/float64(alone), "overhead_pct")
}
