package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kaizen-code/kz/engine"
)

// ReadArtifact is the read_artifact tool: it reads back, by lines, a tool
// result the Executor stored as an artifact because it was over its
// tool's limit. It only reads, so the gate lets it run in every mode.
type ReadArtifact struct{}

// ArtifactReader returns a stored artifact of one session. A reference of
// another session is not found: a model reads only its own session's
// results.
type ArtifactReader interface {
	ReadArtifact(ctx context.Context, sessionID, ref string) ([]byte, error)
}

// Limits of read_artifact. MaxArtifactOutput stays under DefaultMaxResult,
// so a page is never stored as an artifact again.
const (
	MaxArtifactOutput   = 25000
	DefaultArtifactRows = 2000
)

type readArtifactInput struct {
	Artifact json.RawMessage `json:"artifact"`
	Offset   int             `json:"offset,omitempty"`
	Limit    int             `json:"limit,omitempty"`
}

// Spec implements Tool.
func (ReadArtifact) Spec() ToolSpec {
	return ToolSpec{Name: "read_artifact", Description: description("read_artifact"), ReadOnly: true, ConcurrencySafe: true,
		Exposure: ExposureNative, Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"artifact":{"type":["string","integer"],"description":"The artifact reference, artifact:N, or N"},` +
			`"offset":{"type":"integer","minimum":1,"description":"First line to return (1-based)"},` +
			`"limit":{"type":"integer","minimum":1,"description":"Number of lines to return"}},` +
			`"required":["artifact"],"additionalProperties":false}`)}
}

// Prepare implements Tool.
func (ReadArtifact) Prepare(_ context.Context, env *Env, input json.RawMessage) (Call, error) {
	var in readArtifactInput
	if err := DecodeStrict(input, &in); err != nil {
		return nil, err
	}
	ref, err := ArtifactRef(in.Artifact)
	if err != nil {
		return nil, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return nil, errors.New("offset and limit must be positive")
	}
	if env.Artifacts == nil {
		return nil, errors.New("this session keeps no artifacts")
	}
	return &readArtifactCall{ref: ref, offset: max(in.Offset, 1), limit: in.Limit}, nil
}

// ArtifactRef normalises a model's artifact argument, "artifact:12", "12"
// or 12, to "artifact:12".
func ArtifactRef(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", errors.New("artifact must be a reference like artifact:12")
		}
		s = n.String()
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(s), "artifact:"), 10, 64)
	if err != nil || n <= 0 {
		return "", fmt.Errorf("artifact %q: not a reference like artifact:12", s)
	}
	return "artifact:" + strconv.FormatInt(n, 10), nil
}

type readArtifactCall struct {
	ref           string
	offset, limit int
}

func (c *readArtifactCall) Request() engine.PermissionRequest { return engine.PermissionRequest{} }

func (c *readArtifactCall) Run(ctx context.Context, rc *RunContext) (string, error) {
	b, err := rc.Env.Artifacts.ReadArtifact(ctx, rc.Env.SessionID, c.ref)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", c.ref, err)
	}
	return PageLines(c.ref, b, c.offset, c.limit), nil
}

// PageLines returns lines offset to offset+limit-1 (1-based; limit zero
// means DefaultArtifactRows) of content, cut at a line boundary to fit in
// MaxArtifactOutput bytes, then a last line that says what was shown and
// where to continue. Invalid UTF-8 is replaced, so the page is always
// valid text.
func PageLines(ref string, content []byte, offset, limit int) string {
	if limit <= 0 {
		limit = DefaultArtifactRows
	}
	offset = max(offset, 1)
	total := bytes.Count(content, []byte("\n"))
	if len(content) > 0 && content[len(content)-1] != '\n' {
		total++
	}
	if offset > total {
		return fmt.Sprintf("[%s has %d lines; offset %d is past its end]", ref, total, offset)
	}
	rest := content
	for range offset - 1 {
		_, rest, _ = bytes.Cut(rest, []byte("\n"))
	}
	var out strings.Builder
	last := offset - 1
	for ; last < total && last-offset+1 < limit; last++ {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		text := strings.ToValidUTF8(string(line), "\uFFFD")
		if out.Len()+len(text)+1 > MaxArtifactOutput {
			if last == offset-1 {
				// One line longer than a page: show its start.
				cut := MaxArtifactOutput
				for cut > 0 && !utf8.RuneStart(text[cut]) {
					cut--
				}
				out.WriteString(text[:cut] + "…\n")
				last++
			}
			break
		}
		out.WriteString(text + "\n")
		rest = after
	}
	if last < total {
		fmt.Fprintf(&out, "[%s: lines %d-%d of %d shown; continue with offset %d]", ref, offset, last, total, last+1)
	} else {
		fmt.Fprintf(&out, "[%s: lines %d-%d of %d shown; end of the artifact]", ref, offset, last, total)
	}
	return out.String()
}
