package thirdparty

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
)

// TestRowKeysWriteWhatComparingWrites: a renderer given the rows' keys
// (TerminalRenderer.SetRowKeys, from LineCache.RowKeys), its frames drawn
// over the frame before as Bubble Tea draws them (DrawCached), writes,
// frame after frame, exactly the bytes a renderer that compares every row
// of frames drawn on a cleared buffer writes, for random sequences of frames that scroll up and down by a few
// lines (the keys move with the rows), change rows in place, repeat
// lines, start a line with a combining mark that folds into a cached row
// (which loses its key), hold wide and emoji cells (rows the renderer
// repaints whole), and now and then change the screen's size or erase
// it, or come without keys; in full-screen mode with the scroll
// optimisation, and inline with frames taller than the screen now and
// then (Bubble Tea's renderer drops their top rows).
func TestRowKeysWriteWhatComparingWrites(t *testing.T) {
	for _, mode := range []struct {
		name       string
		fullscreen bool
	}{{"fullscreen", true}, {"inline", false}} {
		for seed := range uint64(16) {
			t.Run(fmt.Sprintf("%s/%d", mode.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				var keyed, compared bytes.Buffer
				rk, rc := testRenderer(&keyed, mode.fullscreen), testRenderer(&compared, mode.fullscreen)
				w, h := 40, 12
				bk, bc := uv.NewScreenBuffer(w, h), uv.NewScreenBuffer(w, h)
				var lines uv.LineCache
				var rows []string
				shown := 0
				for i := range 400 {
					// Now and then a frame comes without keys: the keys
					// of the frame before must not apply to it.
					unkeyed := false
					switch r := rng.IntN(40); {
					case r == 0:
						w, h = []int{40, 23, 60}[rng.IntN(3)], 8+rng.IntN(8)
						bk, bc = uv.NewScreenBuffer(w, h), uv.NewScreenBuffer(w, h)
						rk.Resize(w, h)
						rc.Resize(w, h)
					case r == 1:
						rk.Erase()
						rc.Erase()
					case r < 5:
						unkeyed = true
					}
					// Inline, a frame may be taller than the screen:
					// Bubble Tea draws it whole and drops the rows above
					// the screen, and their keys with them.
					fh := h
					if !mode.fullscreen && rng.IntN(3) == 0 {
						fh += 1 + rng.IntN(3)
					}
					rows = nextRows(rng, rows, fh)
					frame := strings.Join(rows, "\n")
					if bk.Width() != w || bk.Height() != fh {
						bk, bc = uv.NewScreenBuffer(w, fh), uv.NewScreenBuffer(w, fh)
					}
					bc.Clear()
					uv.NewStyledString(frame).DrawCleared(bc, bc.Bounds())
					if unkeyed {
						bk.Clear()
						uv.NewStyledString(frame).DrawCleared(bk, bk.Bounds())
					} else {
						// As Bubble Tea draws: over the frame before.
						uv.NewStyledString(frame).DrawCached(bk, &lines)
						for _, k := range lines.RowKeys() {
							if k != 0 {
								shown++
							}
						}
						rk.SetRowKeys(lines.RowKeys()[fh-h:])
					}
					bk.Lines, bc.Lines = bk.Lines[fh-h:], bc.Lines[fh-h:]
					rk.Render(bk.RenderBuffer)
					rc.Render(bc.RenderBuffer)
					if err := rk.Flush(); err != nil {
						t.Fatal(err)
					}
					if err := rc.Flush(); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(keyed.Bytes(), compared.Bytes()) {
						t.Fatalf("frame %d (%d×%d): with keys the renderer wrote\n%q\nwithout\n%q\nframe:\n%s",
							i, w, h, tail(keyed.Bytes()), tail(compared.Bytes()), frame)
					}
				}
				if shown == 0 {
					t.Fatal("no row was drawn from the cache: the keys were never used")
				}
			})
		}
	}
}

// testRenderer is a renderer for a 256-colour xterm writing to w, full
// screen with the scroll optimisation, or inline with relative cursor
// moves.
func testRenderer(w io.Writer, fullscreen bool) *uv.TerminalRenderer {
	r := uv.NewTerminalRenderer(w, []string{"TERM=xterm-256color"})
	r.SetColorProfile(colorprofile.ANSI256)
	r.SetScrollOptim(fullscreen)
	r.SetFullscreen(fullscreen)
	r.SetRelativeCursor(!fullscreen)
	return r
}

// nextRows is the next frame's rows: most often the rows before scrolled
// up (a stream) or down (paging back) by up to three lines with new ones
// at the edge; sometimes the same rows with one changed, or a new screen.
func nextRows(rng *rand.Rand, rows []string, h int) []string {
	pick := func() string {
		if rng.IntN(4) == 0 {
			return fmt.Sprintf("\x1b[38;5;252mline %d\x1b[0m", rng.IntN(30))
		}
		return linePool[rng.IntN(len(linePool))]
	}
	var next []string
	switch r := rng.IntN(10); {
	case len(rows) == 0 || r == 0:
	case r <= 5:
		next = append(next, rows[min(1+rng.IntN(3), len(rows)):]...)
	case r <= 7:
		for range 1 + rng.IntN(3) {
			next = append(next, pick())
		}
		next = append(next, rows...)
	default:
		next = append(next, rows...)
		next[rng.IntN(len(next))] = pick()
	}
	for len(next) < h {
		next = append(next, pick())
	}
	return next[:h]
}

func tail(b []byte) []byte {
	return b[max(len(b)-400, 0):]
}

// streamedFrames are the frames kz's TUI drew, on a 200×50 terminal, while
// BenchmarkProcessStream streamed its 200 KB answer (testdata, recorded
// from Bubble Tea's flush): the transcript scrolls, and each block of the
// answer is drawn plainly while it is open and redrawn by glamour when it
// closes, so many rows change from one frame to the next.
func streamedFrames(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open("testdata/streamed_frames.bin.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	r := bufio.NewReader(zr)
	var frames []string
	for {
		var n int
		if _, err := fmt.Fscanf(r, "%d\n", &n); err == io.EOF {
			return frames
		} else if err != nil {
			tb.Fatal(err)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			tb.Fatal(err)
		}
		frames = append(frames, string(b))
	}
}

// renderStreamed renders frames as Bubble Tea's flush does, with the row
// keys and drawing over the frame before (keyed), or as it did before
// them: clearing the buffer, drawing with the line cache, comparing every
// row.
func renderStreamed(w io.Writer, frames []string, keyed bool) {
	r := testRenderer(w, true)
	buf := uv.NewScreenBuffer(200, 50)
	var lines uv.LineCache
	for _, f := range frames {
		if keyed {
			uv.NewStyledString(f).DrawCached(buf, &lines)
			r.SetRowKeys(lines.RowKeys())
		} else {
			buf.Clear()
			uv.NewStyledString(f).DrawClearedCached(buf, &lines)
		}
		r.Render(buf.RenderBuffer)
		_ = r.Flush()
	}
}

// TestStreamedFramesRenderTheSameWithKeys: kz's real streamed frames are
// written the same, byte for byte, with row keys as without, and as the
// renderer wrote them before the row keys, the lazy draw, the pen's and
// the cell comparison's short cuts (want: the sha256 of the bytes the
// fork at 3be4f9e wrote, clearing and drawing every frame whole).
func TestStreamedFramesRenderTheSameWithKeys(t *testing.T) {
	frames := streamedFrames(t)
	var keyed, compared bytes.Buffer
	renderStreamed(&keyed, frames, true)
	renderStreamed(&compared, frames, false)
	if !bytes.Equal(keyed.Bytes(), compared.Bytes()) {
		t.Fatalf("with keys the renderer wrote %d bytes, without %d, not the same", keyed.Len(), compared.Len())
	}
	const want = "47f58b8ecbf465f02a879715ab22ed626cddc5d0cd890946de2ddc27d3a49b92"
	if got := fmt.Sprintf("%x", sha256.Sum256(keyed.Bytes())); got != want {
		t.Fatalf("the renderer wrote %d bytes with sha256 %s, want %s", keyed.Len(), got, want)
	}
}

// BenchmarkStreamedFrame is the renderer's cost per frame of kz's real
// streamed frames (streamedFrames), from drawing the view into the buffer
// to the bytes for the terminal, with row keys and without.
func BenchmarkStreamedFrame(b *testing.B) {
	frames := streamedFrames(b)
	for _, keyed := range []bool{false, true} {
		b.Run(map[bool]string{false: "compare", true: "keys"}[keyed], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				renderStreamed(io.Discard, frames, keyed)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(frames)), "µs/frame")
		})
	}
}
