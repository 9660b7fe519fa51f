package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kaizen-code/kz/internal/diff"
)

// The mutation corpus: real before/after pairs (testdata/patch/corpus/pairs)
// plus deterministic synthetic edits of files from Go's own source tree,
// each expressed as a proposal in every format, then corrupted the way
// models corrupt proposals. The applier must never produce anything other
// than the intended after-state: it either applies correctly or refuses.

const corpusDir = "../testdata/patch/corpus/pairs"

type corpusPair struct {
	name, path    string
	before, after []byte
}

// corpusHunk is one change region of a pair with its context.
type corpusHunk struct {
	search, replace []string
	hint, newHint   int // 1-based
	ctxBefore       int // leading context lines in search and replace
	ctxAfter        int
}

// Corruption kinds. The first group is what the ladder must recover.
var corruptions = []string{
	"clean", "line_numbers", "trailing_whitespace", "indentation", "crlf",
	"unicode", "blank_edges", "elided_middle", "missing_context", "extra_context", "truncated", "anchor_twice",
}

var recoverable = map[string]bool{"clean": true, "line_numbers": true, "trailing_whitespace": true, "indentation": true, "crlf": true}

var formats = []Format{FormatSearchReplace, FormatEnvelope, FormatUnified, FormatJSON, FormatWholeFile}

func loadCorpus(t testing.TB) []corpusPair {
	t.Helper()
	var out []corpusPair
	dirs, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		dir := filepath.Join(corpusDir, d.Name())
		p, err := os.ReadFile(filepath.Join(dir, "path.txt"))
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimSpace(string(p))
		ext := filepath.Ext(path)
		b, err1 := os.ReadFile(filepath.Join(dir, "before"+ext))
		a, err2 := os.ReadFile(filepath.Join(dir, "after"+ext))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		out = append(out, corpusPair{d.Name(), path, b, a})
	}
	return append(out, gorootPairs(t)...)
}

// gorootPairs makes deterministic synthetic edits (modify, insert, delete
// lines) to a fixed list of files of the Go toolchain's source.
func gorootPairs(t testing.TB) []corpusPair {
	files := []string{"strings/strings.go", "bytes/buffer.go", "sort/sort.go", "bufio/scan.go", "path/path.go",
		"container/list/list.go", "text/tabwriter/tabwriter.go", "encoding/csv/reader.go", "unicode/utf8/utf8.go", "html/escape.go",
		"net/url/url.go", "strconv/quote.go"}
	var out []corpusPair
	for i, f := range files {
		b, err := os.ReadFile(filepath.Join(goroot(t), "src", f))
		if err != nil {
			t.Logf("skip %s: %v", f, err)
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(i), 42))
		d := parseDoc(b)
		lines := append([]string(nil), d.lines...)
		n := len(lines)
		for k := 0; k < 4; k++ {
			at := n/5*(k+1) - n/10 + rng.IntN(max(n/10, 1))
			for at < len(lines)-1 && strings.TrimSpace(lines[at]) == "" {
				at++
			}
			if at >= len(lines) {
				continue
			}
			indent := lines[at][:len(lines[at])-len(strings.TrimLeft(lines[at], " \t"))]
			switch (k + i) % 3 {
			case 0:
				lines[at] += " // kz: edited"
			case 1:
				ins := []string{indent + "_ = \"kz inserted\" // was it 'quoted'?", indent + "// kz: note"}
				lines = append(lines[:at+1], append(ins, lines[at+1:]...)...)
			case 2:
				lines = append(lines[:at], lines[at+1:]...)
			}
		}
		after := strings.Join(lines, "\n") + "\n"
		out = append(out, corpusPair{"goroot:" + f, "src/" + f, b, []byte(after)})
	}
	return out
}

// pairHunks computes the change regions of a pair with ctx lines of
// context, extended (as a careful model would) until each search text is
// unique in the before file.
func pairHunks(before, after []string, ctx int) []corpusHunk {
	type region struct{ oldLo, oldHi, newLo, newHi int }
	// Each run of changed lines of a hunk is a region; o and n are the
	// 0-based old and new lines the walk is at.
	var regions []region
	for _, h := range diff.Hunks([]byte(strings.Join(before, "\n")+"\n"), []byte(strings.Join(after, "\n")+"\n")) {
		o, _ := h.OldSpan()
		n, _ := h.NewSpan()
		for _, l := range h.Lines {
			if l.Op == diff.Context {
				o++
				n++
				continue
			}
			if k := len(regions) - 1; k < 0 || regions[k].oldHi != o || regions[k].newHi != n {
				regions = append(regions, region{o, o, n, n})
			}
			r := &regions[len(regions)-1]
			if l.Op == diff.Delete {
				o++
				r.oldHi = o
			} else {
				n++
				r.newHi = n
			}
		}
	}
	var out []corpusHunk
	for i, r := range regions {
		gapPrev, gapNext := r.oldLo, len(before)-r.oldHi
		if i > 0 {
			gapPrev = r.oldLo - regions[i-1].oldHi
		}
		if i+1 < len(regions) {
			gapNext = regions[i+1].oldLo - r.oldHi
		}
		cb, ca := min(ctx, gapPrev), min(ctx, gapNext)
		for {
			search := before[r.oldLo-cb : r.oldHi+ca]
			if countExact(before, search) <= 1 || (cb >= gapPrev && ca >= gapNext) {
				break
			}
			cb, ca = min(cb+1, gapPrev), min(ca+1, gapNext)
		}
		out = append(out, corpusHunk{
			search:  append([]string(nil), before[r.oldLo-cb:r.oldHi+ca]...),
			replace: append([]string(nil), after[r.newLo-cb:r.newHi+ca]...),
			hint:    r.oldLo - cb + 1, newHint: r.newLo - cb + 1, ctxBefore: cb, ctxAfter: ca,
		})
	}
	return out
}

func countExact(lines, search []string) int {
	n := 0
	for i := 0; i+len(search) <= len(lines); i++ {
		if equalLines(lines[i:i+len(search)], search) {
			n++
		}
	}
	return n
}

type outcome int

const (
	applied outcome = iota
	refused
	wrong
	skipped
)

// TestMutationCorpus runs every pair × format × corruption. Any wrong
// apply fails the test; so does a success rate below 98% on the
// recoverable corruptions. Rates per kind are logged.
func TestMutationCorpus(t *testing.T) {
	pairs := loadCorpus(t)
	if len(pairs) < 10 {
		t.Fatalf("corpus has only %d pairs", len(pairs))
	}
	type tally struct{ ok, refused, wrong, total int }
	byKind := map[string]*tally{}
	byFormat := map[Format]*tally{}
	recOK, recTotal := 0, 0
	for pi, pr := range pairs {
		for ci, kind := range corruptions {
			for _, f := range formats {
				rng := rand.New(rand.NewPCG(uint64(pi*100+ci), uint64(len(f))))
				res, detail := runCorpusCase(pr, kind, f, rng)
				if res == skipped {
					continue
				}
				k := byKind[kind]
				if k == nil {
					k = &tally{}
					byKind[kind] = k
				}
				ft := byFormat[f]
				if ft == nil {
					ft = &tally{}
					byFormat[f] = ft
				}
				k.total++
				ft.total++
				switch res {
				case applied:
					k.ok++
					ft.ok++
				case refused:
					k.refused++
					ft.refused++
				case wrong:
					k.wrong++
					ft.wrong++
					t.Errorf("WRONG APPLY: pair %s, format %s, corruption %s: %s", pr.name, f, kind, detail)
				}
				if recoverable[kind] {
					recTotal++
					if res == applied {
						recOK++
					} else {
						t.Logf("recoverable case not applied: pair %s, format %s, corruption %s: %s", pr.name, f, kind, detail)
					}
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-20s %8s %8s %8s %8s\n", "corruption", "applied", "refused", "WRONG", "rate")
	for _, kind := range corruptions {
		k := byKind[kind]
		if k == nil {
			continue
		}
		fmt.Fprintf(&b, "%-20s %8d %8d %8d %7.1f%%\n", kind, k.ok, k.refused, k.wrong, 100*float64(k.ok)/float64(k.total))
	}
	fs := make([]string, 0)
	for f := range byFormat {
		fs = append(fs, string(f))
	}
	sort.Strings(fs)
	for _, f := range fs {
		k := byFormat[Format(f)]
		fmt.Fprintf(&b, "format %-13s %8d %8d %8d %7.1f%%\n", f, k.ok, k.refused, k.wrong, 100*float64(k.ok)/float64(k.total))
	}
	rate := 100 * float64(recOK) / float64(max(recTotal, 1))
	fmt.Fprintf(&b, "recoverable (clean, line numbers, whitespace, indentation, CRLF): %d/%d = %.1f%%\n", recOK, recTotal, rate)
	t.Log(b.String())
	if rate < 98 {
		t.Errorf("recoverable success rate %.1f%% < 98%%", rate)
	}
}

// runCorpusCase builds, corrupts and validates one proposal. It compares
// the planned new content with the expected after-state.
func runCorpusCase(pr corpusPair, kind string, f Format, rng *rand.Rand) (outcome, string) {
	before, after := pr.before, pr.after
	bd, ad := parseDoc(before), parseDoc(after)
	ctx := 3
	if kind == "elided_middle" {
		ctx = 7
	}
	hunks := pairHunks(bd.lines, ad.lines, ctx)
	if len(hunks) == 0 {
		return skipped, ""
	}
	if f == FormatWholeFile && kind != "clean" && kind != "crlf" && kind != "truncated" {
		return skipped, ""
	}
	switch kind {
	case "line_numbers":
		for i := range hunks {
			shift := 7 + rng.IntN(30)
			if rng.IntN(2) == 0 && hunks[i].hint > shift {
				shift = -shift
			}
			hunks[i].hint += shift
			hunks[i].newHint += shift
		}
	case "trailing_whitespace":
		for i := range hunks {
			mapContext(&hunks[i], func(s string) string {
				if strings.TrimSpace(s) != "" && rng.IntN(2) == 0 {
					return s + strings.Repeat(" ", 1+rng.IntN(3))
				}
				return s
			}, true)
		}
	case "indentation":
		for i := range hunks {
			h := &hunks[i]
			unit := "\t"
			if strings.HasPrefix(strings.Join(h.search, "\n"), " ") || strings.Contains(strings.Join(h.search, "\n"), "\n  ") {
				unit = "    "
			}
			if canDedent(h.search, unit) && canDedent(h.replace, unit) && rng.IntN(2) == 0 {
				h.search, h.replace = dedent(h.search, unit), dedent(h.replace, unit)
			} else {
				h.search, h.replace = indent(h.search, unit), indent(h.replace, unit)
			}
		}
	case "unicode":
		for i := range hunks {
			mapContext(&hunks[i], func(s string) string {
				return strings.NewReplacer(`"`, "\u201c", `'`, "\u2019", " - ", " \u2013 ").Replace(s)
			}, false)
		}
	case "blank_edges":
		for i := range hunks {
			h := &hunks[i]
			h.search = append(append([]string{""}, h.search...), "")
			h.replace = append(append([]string{""}, h.replace...), "")
		}
	case "elided_middle":
		any := false
		for i := range hunks {
			h := &hunks[i]
			if h.ctxBefore < 6 {
				continue
			}
			any = true
			marker := "... existing code ..."
			keep := h.ctxBefore - 1
			h.search = append(append(append([]string{}, h.search[:2]...), marker), h.search[keep:]...)
			h.replace = append(append(append([]string{}, h.replace[:2]...), marker), h.replace[keep:]...)
		}
		if !any {
			return skipped, ""
		}
	case "missing_context":
		for i := range hunks {
			h := &hunks[i]
			if h.ctxBefore >= 3 {
				h.search = append(append([]string{}, h.search[:1]...), h.search[2:]...)
				h.replace = append(append([]string{}, h.replace[:1]...), h.replace[2:]...)
			}
		}
	case "extra_context":
		for i := range hunks {
			h := &hunks[i]
			extra := "kz: this line is not in the file"
			h.search = append(append(append([]string{}, h.search[:1]...), extra), h.search[1:]...)
			h.replace = append(append(append([]string{}, h.replace[:1]...), extra), h.replace[1:]...)
		}
	case "anchor_twice":
		// The first hunk's old lines also appear at the end of the file.
		dup := "\n" + strings.Join(hunks[0].search, "\n") + "\n"
		before = append(append([]byte(nil), before...), []byte(ensureNL(string(before)) + dup)[len(before):]...)
		after = []byte(ensureNL(string(after)) + dup)
		if bd.dominant == "\r\n" {
			before = []byte(strings.ReplaceAll(strings.ReplaceAll(string(before), "\r\n", "\n"), "\n", "\r\n"))
			after = []byte(strings.ReplaceAll(strings.ReplaceAll(string(after), "\r\n", "\n"), "\n", "\r\n"))
		}
	}
	text := renderProposal(pr.path, hunks, f, string(ad.bytesLF()))
	switch kind {
	case "crlf":
		lines := strings.SplitAfter(text, "\n")
		for i := range lines {
			if rng.IntN(2) == 0 && strings.HasSuffix(lines[i], "\n") {
				lines[i] = strings.TrimSuffix(lines[i], "\n") + "\r\n"
			}
		}
		text = strings.Join(lines, "")
	case "truncated":
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		cut := 2 + rng.IntN(2)
		if cut >= len(lines) {
			return skipped, ""
		}
		text = strings.Join(lines[:len(lines)-cut], "\n") + "\n"
	}
	fsys := newMemFS(map[string][]byte{pr.path: before})
	a := &Applier{FS: fsys}
	p, err := Parse(text)
	if err != nil {
		return refused, "parse: " + err.Error()
	}
	plan, err := a.Validate(context.Background(), p)
	if err != nil {
		return refused, err.Error()
	}
	if len(plan.Files) != 1 || string(plan.Files[0].NewContent) != string(after) {
		got := ""
		if len(plan.Files) == 1 {
			got = string(plan.Files[0].NewContent)
		}
		return wrong, fmt.Sprintf("result differs from the intended after-state\n%s", firstDiff(got, string(after)))
	}
	return applied, ""
}

func ensureNL(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// bytesLF renders the doc with LF endings and no BOM (what a model writes).
func (d *doc) bytesLF() []byte {
	c := *d
	c.bom = false
	c.eols = make([]string, len(d.eols))
	for i, e := range d.eols {
		if e != "" {
			c.eols[i] = "\n"
		}
	}
	return c.bytes()
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q want %q", i+1, gl, wl)
		}
	}
	return "same lines, different bytes"
}

// mapContext applies fn to context lines (in search and replace alike)
// and, when removed is set, to removed lines too.
func mapContext(h *corpusHunk, fn func(string) string, removed bool) {
	p := 0
	for p < len(h.search) && p < len(h.replace) && h.search[p] == h.replace[p] {
		p++
	}
	s := 0
	for s < len(h.search)-p && s < len(h.replace)-p && h.search[len(h.search)-1-s] == h.replace[len(h.replace)-1-s] {
		s++
	}
	for i := 0; i < p; i++ {
		v := fn(h.search[i])
		h.search[i], h.replace[i] = v, v
	}
	for i := 0; i < s; i++ {
		v := fn(h.search[len(h.search)-1-i])
		h.search[len(h.search)-1-i], h.replace[len(h.replace)-1-i] = v, v
	}
	if removed {
		for i := p; i < len(h.search)-s; i++ {
			h.search[i] = fn(h.search[i])
		}
	}
}

func indent(lines []string, unit string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			l = unit + l
		}
		out[i] = l
	}
	return out
}

func canDedent(lines []string, unit string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, unit) {
			return false
		}
	}
	return true
}

func dedent(lines []string, unit string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, unit)
	}
	return out
}

// renderProposal writes hunks in one format.
func renderProposal(path string, hunks []corpusHunk, f Format, wholeAfter string) string {
	var b strings.Builder
	switch f {
	case FormatSearchReplace:
		b.WriteString("SUMMARY: corpus change\n\n")
		for _, h := range hunks {
			fmt.Fprintf(&b, "%s\n```\n<<<<<<< SEARCH\n%s=======\n%s>>>>>>> REPLACE\n```\n\n", path, joinLines(h.search), joinLines(h.replace))
		}
	case FormatEnvelope:
		fmt.Fprintf(&b, "*** Begin Patch\n*** Update File: %s\n", path)
		for _, h := range hunks {
			b.WriteString("@@\n")
			writeHunkLines(&b, h)
		}
		b.WriteString("*** End Patch\n")
	case FormatUnified:
		fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", path, path)
		for _, h := range hunks {
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.hint, len(h.search), h.newHint, len(h.replace))
			writeHunkLines(&b, h)
		}
	case FormatJSON:
		fc := FileChange{Path: path, Operation: OpModify}
		for _, h := range hunks {
			fc.Edits = append(fc.Edits, Edit{Search: joinLines(h.search), Replace: joinLines(h.replace), LineHint: h.hint})
		}
		data, _ := json.MarshalIndent(Proposal{Summary: "corpus", Files: []FileChange{fc}}, "", " ")
		b.Write(data)
		b.WriteString("\n")
	case FormatWholeFile:
		// A careful model fences a file holding its own ``` lines with
		// a longer fence, as the parser asks.
		fence := "```"
		for strings.Contains(wholeAfter, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "%s\n%s\n%s%s\n", path, fence, ensureNL(wholeAfter), fence)
	}
	return b.String()
}

func writeHunkLines(b *strings.Builder, h corpusHunk) {
	p := 0
	for p < len(h.search) && p < len(h.replace) && h.search[p] == h.replace[p] {
		p++
	}
	s := 0
	for s < len(h.search)-p && s < len(h.replace)-p && h.search[len(h.search)-1-s] == h.replace[len(h.replace)-1-s] {
		s++
	}
	for _, l := range h.search[:p] {
		b.WriteString(" " + l + "\n")
	}
	for _, l := range h.search[p : len(h.search)-s] {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range h.replace[p : len(h.replace)-s] {
		b.WriteString("+" + l + "\n")
	}
	for _, l := range h.search[len(h.search)-s:] {
		b.WriteString(" " + l + "\n")
	}
}

// goroot asks the go command where the standard library is.
func goroot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
