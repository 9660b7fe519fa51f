package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/kaizen-code/kz/engine"
)

// nonblockFlags open a file without blocking on a FIFO and without making a
// terminal the controlling one.
const nonblockFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// Search limits.
const (
	// MaxGlobResults bounds glob output.
	MaxGlobResults = 1000
	// MaxGrepLines bounds the lines grep prints.
	MaxGrepLines = 2000
	// MaxGrepFileBytes skips larger files.
	MaxGrepFileBytes = 20 << 20
	// MaxGrepContext bounds the context option.
	MaxGrepContext = 20
)

// ---- glob ----

// Glob is the glob tool.
type Glob struct{}

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

// Spec implements Tool.
func (Glob) Spec() ToolSpec {
	return ToolSpec{Name: "glob", Description: description("glob"), ReadOnly: true, ConcurrencySafe: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"Glob pattern such as **/*.go, relative to path"},` +
			`"path":{"type":"string","description":"Directory to search (default: the workspace)"}},` +
			`"required":["pattern"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (Glob) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in globInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if in.Pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	segs := strings.Split(strings.TrimPrefix(in.Pattern, "./"), "/")
	for _, s := range segs {
		if s == ".." {
			return nil, errors.New("pattern may not contain .. segments")
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", in.Pattern, err)
		}
	}
	if in.Path == "" {
		in.Path = "."
	}
	t, err := resolveTarget(env, in.Path)
	if err != nil {
		return nil, err
	}
	return &globCall{t: t, segs: segs}, nil
}

type globCall struct {
	t    target
	segs []string
}

func (c *globCall) Request() engine.PermissionRequest {
	return engine.PermissionRequest{Paths: c.t.paths()}
}

func (c *globCall) Run(ctx context.Context, rc *RunContext) (string, error) {
	base := c.t.resolved
	filter, err := newReadFilter(rc.Env, base, false)
	if err != nil {
		return "", err
	}
	// A directory below which nothing can match is not walked, nor judged
	// by the read policy (so the note counts only what could have matched).
	keepDir := func(rel string) bool {
		r := rel
		if base != "." {
			r = strings.TrimPrefix(rel, base+"/")
		}
		return couldMatchBelow(c.segs, strings.Split(r, "/")) && filter.dir(rel)
	}
	var out []string
	more := 0
	err = walk(ctx, rc.Env, c.t.pin, keepDir, func(f walkFile) bool {
		defer f.release()
		rel := f.rel
		if base != "." {
			rel = strings.TrimPrefix(rel, base+"/")
		}
		if matchSegs(c.segs, strings.Split(rel, "/")) && filter.file(f.rel) {
			if len(out) < MaxGlobResults {
				out = append(out, displayPath(f.rel))
			} else {
				more++
			}
		}
		return true
	})
	if err != nil {
		return "", err
	}
	withheld := filter.summary()
	if len(out) == 0 {
		return joinNote("(no files match)", withheld), nil
	}
	s := strings.Join(out, "\n") + "\n"
	if more > 0 {
		s += fmt.Sprintf("(%d more files not shown; narrow the pattern)\n", more)
	}
	return s + withheld, ctx.Err()
}

// couldMatchBelow reports whether a file below the directory dir (split on
// "/") could match the pattern pat (split on "/", "**" spanning any number
// of segments).
func couldMatchBelow(pat, dir []string) bool {
	for len(dir) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return len(pat) > 0
}

// ---- grep ----

// Grep is the grep tool.
type Grep struct{}

// GrepMode is grep's output mode.
type GrepMode string

// Grep output modes.
const (
	GrepContent GrepMode = "content"
	GrepFiles   GrepMode = "files_with_matches"
	GrepCount   GrepMode = "count"
)

type grepInput struct {
	Pattern         string   `json:"pattern"`
	Path            string   `json:"path,omitempty"`
	Glob            string   `json:"glob,omitempty"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	Context         int      `json:"context,omitempty"`
	OutputMode      GrepMode `json:"output_mode,omitempty"`
}

// Spec implements Tool.
func (Grep) Spec() ToolSpec {
	return ToolSpec{Name: "grep", Description: description("grep"), ReadOnly: true, ConcurrencySafe: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"Regular expression (RE2 syntax)"},` +
			`"path":{"type":"string","description":"Directory or file to search (default: the workspace)"},` +
			`"glob":{"type":"string","description":"Only search files whose path matches, e.g. *.go or src/**/*.ts"},` +
			`"case_insensitive":{"type":"boolean"},` +
			`"context":{"type":"integer","minimum":0,"maximum":20,"description":"Lines of context around matches"},` +
			`"output_mode":{"type":"string","enum":["content","files_with_matches","count"]}},` +
			`"required":["pattern"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (Grep) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in grepInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	if in.Pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	switch in.OutputMode {
	case "":
		in.OutputMode = GrepContent
	case GrepContent, GrepFiles, GrepCount:
	default:
		return nil, fmt.Errorf("unknown output_mode %q", in.OutputMode)
	}
	if in.Context < 0 || in.Context > MaxGrepContext {
		return nil, fmt.Errorf("context must be between 0 and %d", MaxGrepContext)
	}
	flags := "(?m)"
	if in.CaseInsensitive {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + in.Pattern)
	if err != nil {
		return nil, fmt.Errorf("bad pattern: %w", err)
	}
	var globSegs []string
	if in.Glob != "" {
		globSegs = strings.Split(in.Glob, "/")
		for _, s := range globSegs {
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("bad glob %q: %w", in.Glob, err)
			}
		}
	}
	if in.Path == "" {
		in.Path = "."
	}
	t, err := resolveTarget(env, in.Path)
	if err != nil {
		return nil, err
	}
	return &grepCall{in: in, t: t, re: re, glob: globSegs, must: requiredLiteral(flags + in.Pattern)}, nil
}

type grepCall struct {
	in   grepInput
	t    target
	re   *regexp.Regexp
	glob []string
	// must is a literal every match contains (nil when there is none);
	// a file without it is skipped without running the regexp.
	must []byte
}

func (c *grepCall) Request() engine.PermissionRequest {
	return engine.PermissionRequest{Paths: c.t.paths()}
}

// wantFile applies the glob option: a pattern without a slash matches the
// base name, one with a slash the workspace-relative path.
func (c *grepCall) wantFile(rel string) bool {
	if c.glob == nil {
		return true
	}
	if len(c.glob) == 1 {
		ok, _ := path.Match(c.glob[0], path.Base(rel))
		return ok
	}
	return matchSegs(c.glob, strings.Split(rel, "/"))
}

// grepResult is the output of one file.
type grepResult struct {
	seq   int
	text  []byte
	lines int
}

// Run searches with a pool of workers fed by one walker. Results are
// assembled strictly in walk order as they arrive, so the output is the
// same whatever order the workers finish in, and the search stops (cancels
// the walk) as soon as the ordered output reaches MaxGrepLines.
func (c *grepCall) Run(parent context.Context, rc *RunContext) (string, error) {
	filter, err := newReadFilter(rc.Env, c.t.resolved, true)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	workers := max(runtime.GOMAXPROCS(0), 1)
	jobs := make(chan walkFile, 64)
	results := make(chan grepResult, 64)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 64<<10)
			for f := range jobs {
				r := grepResult{seq: f.seq}
				if ctx.Err() == nil {
					r, buf = c.searchFile(f, buf)
				}
				f.release()
				results <- r
			}
		}()
	}
	var walkErr error
	go func() {
		defer close(jobs)
		seq := 0
		// The filter is used only here, by the walker goroutine.
		walkErr = walk(ctx, rc.Env, c.t.pin, filter.dir, func(f walkFile) bool {
			if !c.wantFile(f.rel) || !filter.file(f.rel) {
				f.release()
				return true
			}
			f.seq = seq
			select {
			case jobs <- f:
				seq++
				return true
			case <-ctx.Done():
				f.release()
				return false
			}
		})
	}()
	go func() {
		wg.Wait()
		close(results)
	}()

	var sb bytes.Buffer
	lines, next, stopped := 0, 0, false
	pending := map[int]grepResult{}
	for r := range results {
		if stopped {
			continue
		}
		pending[r.seq] = r
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if lines+p.lines > MaxGrepLines && lines > 0 {
				fmt.Fprintf(&sb, "(output stopped after %d lines; narrow the search)\n", lines)
				stopped = true
				cancel()
				break
			}
			sb.Write(p.text)
			lines += p.lines
		}
	}
	// results is closed only after the walker finished, so walkErr is set.
	if walkErr != nil && !stopped {
		return "", walkErr
	}
	withheld := filter.summary()
	if err := parent.Err(); err != nil {
		return sb.String() + withheld, err
	}
	if sb.Len() == 0 {
		return joinNote("(no matches)", withheld), nil
	}
	return sb.String() + withheld, nil
}

// joinNote puts a note line under an empty-result marker.
func joinNote(marker, note string) string {
	if note == "" {
		return marker
	}
	return marker + "\n" + note
}

// searchFile greps one file. buf is reused between files of a worker.
func (c *grepCall) searchFile(f walkFile, buf []byte) (grepResult, []byte) {
	r := grepResult{seq: f.seq}
	data, buf, ok := f.read(buf, MaxGrepFileBytes)
	if !ok {
		return r, buf
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return r, buf
	}
	if c.must != nil && !bytes.Contains(data, c.must) {
		return r, buf
	}
	locs := c.re.FindAllIndex(data, -1)
	if len(locs) == 0 {
		return r, buf
	}
	var out bytes.Buffer
	switch c.in.OutputMode {
	case GrepFiles:
		out.WriteString(displayPath(f.rel) + "\n")
		r.lines = 1
	case GrepCount:
		n := countMatchLines(data, locs)
		fmt.Fprintf(&out, "%s:%d\n", displayPath(f.rel), n)
		r.lines = 1
	default:
		r.lines = c.formatMatches(&out, displayPath(f.rel), data, locs)
	}
	r.text = bytes.Clone(out.Bytes())
	return r, buf
}

// countMatchLines counts the distinct lines on which a match starts.
func countMatchLines(data []byte, locs [][]int) int {
	n, lastLine, pos, line := 0, -1, 0, 0
	for _, l := range locs {
		line += bytes.Count(data[pos:l[0]], []byte{'\n'})
		pos = l[0]
		if line != lastLine {
			n++
			lastLine = line
		}
	}
	return n
}

// formatMatches writes grep -n style lines: "path:N:text" for matching
// lines, "path-N-text" for context, "--" between separate groups.
func (c *grepCall) formatMatches(out *bytes.Buffer, rel string, data []byte, locs [][]int) int {
	// Line starts, computed once per matching file.
	starts := []int{0}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int {
		lo, hi := 0, len(starts)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if starts[mid] <= off {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo
	}
	lineText := func(i int) []byte {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		return bytes.TrimRight(data[starts[i]:end], "\r\n")
	}
	matched := map[int]bool{}
	var order []int
	for _, l := range locs {
		ln := lineOf(l[0])
		if !matched[ln] {
			matched[ln] = true
			order = append(order, ln)
		}
	}
	k := c.in.Context
	printed, last, count := -1, -1, 0
	for _, ln := range order {
		from := max(ln-k, 0)
		to := min(ln+k, len(starts)-1)
		if from <= printed {
			from = printed + 1
		}
		if last >= 0 && from > printed+1 && k > 0 {
			out.WriteString("--\n")
		}
		for i := from; i <= to; i++ {
			sep := "-"
			if matched[i] {
				sep = ":"
			}
			text := lineText(i)
			if len(text) > MaxLineChars {
				text = append(text[:MaxLineChars:MaxLineChars], " …"...)
			}
			fmt.Fprintf(out, "%s%s%d%s%s\n", rel, sep, i+1, sep, text)
			count++
		}
		printed, last = max(printed, to), ln
	}
	return count
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of expr must contain, or nil. Only the top-level concatenation is
// looked at: each of its literal parts is matched in every match, so a
// file that lacks one cannot match, and bytes.Contains rejects it far
// faster than the regexp engine (which only skips ahead by a literal
// prefix, and "func " is on every other line of Go code).
func requiredLiteral(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	var parts []*syntax.Regexp
	switch re.Op {
	case syntax.OpConcat:
		parts = re.Sub
	case syntax.OpLiteral:
		parts = []*syntax.Regexp{re}
	}
	var best []byte
	for _, p := range parts {
		if p.Op != syntax.OpLiteral || p.Flags&syntax.FoldCase != 0 {
			continue
		}
		if lit := []byte(string(p.Rune)); len(lit) > len(best) {
			best = lit
		}
	}
	if len(best) < 2 {
		return nil
	}
	return best
}
