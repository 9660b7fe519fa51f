package patch

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ErrUnknownField is wrapped by ParseJSON when a proposal names a field the
// schema does not know. Dropping such a field silently would lose what the
// model meant (a verification command, a diff), so it is an error whose
// text names every unknown field, for the model to fix.
var ErrUnknownField = fmt.Errorf("unknown proposal field: %w", ErrMalformed)

// ParseJSON decodes a structured-output proposal and checks its shape.
//
// Besides the schema's own fields it reads the two spellings of the design
// documents: files[].patch, one file's change as a unified diff (or an
// apply_patch envelope), and tests, verification commands. A field the
// schema does not know, at any level, is an error that names it.
func ParseJSON(data []byte) (*Proposal, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("proposal JSON is %d bytes: %w", len(data), ErrTooLarge)
	}
	if err := checkJSONFields(data); err != nil {
		return nil, err
	}
	var w wireProposal
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decode proposal JSON: %w", err)
	}
	p := &Proposal{
		Summary:      w.Summary,
		Verification: append(slices.Clone(w.Verification), w.Tests...),
		Risks:        w.Risks,
		Format:       FormatJSON,
	}
	for i, wf := range w.Files {
		f := wf.FileChange
		switch f.Operation {
		case OpAdd, OpModify, OpDelete, OpRename, "":
		default:
			return nil, fmt.Errorf("file %d (%q): unknown operation %q (use add, modify, delete or rename)", i, f.Path, f.Operation)
		}
		if wf.Patch != nil && *wf.Patch != "" {
			if err := applyFilePatch(&f, *wf.Patch); err != nil {
				return nil, fmt.Errorf("file %d (%q): %w", i, f.Path, err)
			}
		}
		if f.Operation == OpRename && f.NewPath == "" {
			return nil, fmt.Errorf("file %d (%q): rename without new_path", i, f.Path)
		}
		for j := range f.Edits {
			f.Edits[j].Search = normalizeNewlines(f.Edits[j].Search)
			f.Edits[j].Replace = normalizeNewlines(f.Edits[j].Replace)
		}
		if f.Content != nil {
			c := normalizeNewlines(*f.Content)
			f.Content = &c
		}
		p.Files = append(p.Files, f)
	}
	return p, nil
}

// wireProposal is the JSON a model writes: a Proposal plus the design
// documents' spellings, which ParseJSON folds into the Proposal.
type wireProposal struct {
	Summary      string     `json:"summary"`
	Files        []wireFile `json:"files"`
	Verification stringList `json:"verification"`
	// Tests are verification commands under the design documents' name.
	Tests stringList `json:"tests"`
	Risks stringList `json:"risks"`
}

// wireFile is one file of a wireProposal. Patch is the file's change as a
// unified diff; it excludes edits and content.
type wireFile struct {
	FileChange
	Patch *string `json:"patch"`
}

// stringList decodes a JSON array of strings, or a single string, which
// models write when there is one command or one risk; null is empty.
type stringList []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (l *stringList) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("decode string: %w", err)
		}
		if s != "" {
			*l = stringList{s}
		}
		return nil
	}
	var xs []string
	if err := json.Unmarshal(data, &xs); err != nil {
		return fmt.Errorf("decode list of strings: %w", err)
	}
	*l = xs
	return nil
}

// The fields the proposal JSON may have at each level are those the
// schema declares, read from it, so that what structured-output providers
// are told and what the parser takes cannot drift apart. The schema is
// written for strict structured output, where every property is required
// (nullable when it may not apply): its required lists are its properties,
// in the order the error message names them. The lists are read from the
// schema on first use, so that every kz process does not parse it at start.
var knownFields = sync.OnceValue(func() (f fieldLists) {
	f.proposal, f.file, f.edit = schemaFields(schemaJSON)
	return f
})

// fieldLists are the fields of a proposal, of each file and of each edit.
type fieldLists struct {
	proposal, file, edit []string
}

// schemaNode is the part of a JSON schema schemaFields reads.
type schemaNode struct {
	Required   []string              `json:"required"`
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
}

// schemaFields returns the fields of a proposal, of each file and of each
// edit that schema declares. A schema it cannot read yields no fields,
// so that every proposal is refused with an error naming its fields
// rather than accepted unchecked; the package tests rule that out for
// the embedded schema.
func schemaFields(schema string) (top, file, edit []string) {
	var s schemaNode
	if json.Unmarshal([]byte(schema), &s) != nil {
		return nil, nil, nil
	}
	files := s.Properties["files"].Items
	if files == nil {
		return s.Required, nil, nil
	}
	edits := files.Properties["edits"].Items
	if edits == nil {
		return s.Required, files.Required, nil
	}
	return s.Required, files.Required, edits.Required
}

// checkJSONFields reports every field of data that the proposal schema
// does not know, named by its place ("files[0].diff"). It only looks at
// object keys; types are left to the decoder, whose errors are clearer.
// A field matches only as the schema spells it: encoding/json would take
// "Summary" for "summary", which the schema (and a strict provider) calls
// an unknown field, so the parser does too.
func checkJSONFields(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("decode proposal JSON: %w", err)
	}
	known := knownFields()
	var unknown []string
	unknown = appendUnknown(unknown, "", top, known.proposal)
	var files []map[string]json.RawMessage
	if raw, ok := top["files"]; ok && json.Unmarshal(raw, &files) == nil {
		for i, f := range files {
			at := fmt.Sprintf("files[%d].", i)
			unknown = appendUnknown(unknown, at, f, known.file)
			var edits []map[string]json.RawMessage
			if raw, ok := f["edits"]; ok && json.Unmarshal(raw, &edits) == nil {
				for j, e := range edits {
					unknown = appendUnknown(unknown, fmt.Sprintf("%sedits[%d].", at, j), e, known.edit)
				}
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return fmt.Errorf("%s (a proposal has %s; each file has %s; each edit has %s): %w",
		strings.Join(unknown, ", "), strings.Join(known.proposal, ", "),
		strings.Join(known.file, ", "), strings.Join(known.edit, ", "), ErrUnknownField)
}

// appendUnknown appends the keys of obj that are not in known, prefixed
// with at, in sorted order so that the message is stable.
func appendUnknown(dst []string, at string, obj map[string]json.RawMessage, known []string) []string {
	var found []string
	for k := range obj {
		if !slices.Contains(known, k) {
			found = append(found, fmt.Sprintf("%q", at+k))
		}
	}
	slices.Sort(found)
	return append(dst, found...)
}

// applyFilePatch fills f from text, one file's change as a unified diff or
// an apply_patch envelope. A diff without ---/+++ lines (hunks only) is
// read as a change to f's own path. The diff must change exactly the file
// f names, in the way its operation says: a patch that disagrees with its
// entry is refused rather than guessed at.
func applyFilePatch(f *FileChange, text string) error {
	if len(f.Edits) > 0 || f.Content != nil {
		return fmt.Errorf("patch and edits or content are exclusive: give one of them: %w", ErrMalformed)
	}
	text = normalizeNewlines(text)
	var (
		sub *Proposal
		err error
	)
	if detectFormat(text) == FormatEnvelope {
		sub, err = ParseEnvelope(text)
	} else {
		sub, err = ParseUnified(withFileHeaders(f, text))
	}
	if err != nil {
		return fmt.Errorf("patch: %w", err)
	}
	if len(sub.Files) != 1 {
		names := make([]string, len(sub.Files))
		for i, c := range sub.Files {
			names[i] = c.Path
		}
		return fmt.Errorf("patch changes %d files (%s); an entry's patch must change only its own file: %w",
			len(sub.Files), strings.Join(names, ", "), ErrMalformed)
	}
	got := sub.Files[0]
	if f.Operation == OpAdd && got.Operation == OpModify {
		// Models write a new file's diff with a/ b/ names and an empty
		// old side ("@@ -0,0 +1,3 @@"): every edit inserts into nothing.
		got = asNewFile(got)
	}
	if f.Path == "" {
		f.Path = got.Path
	}
	if got.Path != f.Path {
		return fmt.Errorf("patch changes %s, not %s: %w", got.Path, f.Path, ErrMalformed)
	}
	if f.Operation != "" && f.Operation != got.Operation {
		return fmt.Errorf("operation is %s but the patch is a %s: %w", f.Operation, describeOp(got.Operation), ErrMalformed)
	}
	if got.Operation == OpRename && f.NewPath != "" && f.NewPath != got.NewPath {
		return fmt.Errorf("new_path is %s but the patch renames to %s: %w", f.NewPath, got.NewPath, ErrMalformed)
	}
	f.Operation = got.Operation
	f.NewPath = cmp.Or(f.NewPath, got.NewPath)
	f.Mode = cmp.Or(f.Mode, got.Mode)
	f.Edits, f.Content = got.Edits, got.Content
	return nil
}

// asNewFile turns a modification whose edits all have an empty search
// side into the content of a new file; any other change is returned as is,
// so that the caller refuses it as a disagreement.
func asNewFile(c FileChange) FileChange {
	var content strings.Builder
	for _, e := range c.Edits {
		if e.Search != "" {
			return c
		}
		content.WriteString(e.Replace)
	}
	s := content.String()
	c.Operation, c.Edits, c.Content = OpAdd, nil, &s
	return c
}

// withFileHeaders prefixes a hunks-only diff with the ---/+++ pair its
// entry implies; a diff that has file headers is returned unchanged.
func withFileHeaders(f *FileChange, text string) string {
	if hasFileHeaders(text) {
		return text
	}
	oldName, newName := "a/"+f.Path, "b/"+f.Path
	switch f.Operation {
	case OpAdd:
		oldName = "/dev/null"
	case OpDelete:
		newName = "/dev/null"
	case OpRename:
		newName = "b/" + f.NewPath
	}
	return "--- " + oldName + "\n+++ " + newName + "\n" + text
}

// hasFileHeaders reports whether text has a "--- " line followed by a
// "+++ " line, or a git "diff --git" line.
func hasFileHeaders(text string) bool {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") {
			return true
		}
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return true
		}
	}
	return false
}

// describeOp names an operation as a noun for error messages.
func describeOp(op Operation) string {
	switch op {
	case OpAdd:
		return "new file"
	case OpDelete:
		return "deletion"
	case OpRename:
		return "rename"
	default:
		return "modification"
	}
}
