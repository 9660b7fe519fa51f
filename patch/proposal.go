// Package patch turns a model's proposed change into files on disk, safely.
//
// The pipeline is Parse (any of the formats models produce, auto-detected,
// into one Proposal) → Applier.Validate (paths, protections, content hashes,
// and every edit located by the matching ladder, all in memory) → Preview
// (per-file unified diffs for review) → Applier.Apply (all files or none,
// journaled so a crash is recovered to all-or-none by Applier.Recover) →
// Applier.Undo (exact previous bytes from snapshots). Nothing in this package
// guesses: an edit applies only where it matches exactly one place.
//
// What is judged is what is written: Validate resolves each path once, the
// guard judges it, and the applier pins it (the identities of its
// directories); Apply, Undo, RevertChange and Recover then reach every file
// through directory handles opened one name at a time without following a
// symbolic link (dir.go, pin.go). A directory swapped for a link between
// the verdict (and the person's review) and the write fails the whole
// change instead of moving a write into .git/hooks or out of the workspace.
package patch

import (
	_ "embed"
)

// Operation is what a proposal does to one file.
type Operation string

// The operations of the proposal schema. An empty operation (whole-file
// content without a stated operation) means "create or replace": it becomes
// OpAdd when the file does not exist and OpModify when it does.
const (
	OpAdd    Operation = "add"
	OpModify Operation = "modify"
	OpDelete Operation = "delete"
	OpRename Operation = "rename"
)

// Format names the syntax a proposal was written in.
type Format string

// The formats Parse understands.
const (
	FormatJSON          Format = "json"
	FormatSearchReplace Format = "search_replace"
	FormatEnvelope      Format = "envelope"
	FormatUnified       Format = "unified"
	FormatWholeFile     Format = "whole_file"
)

// Proposal is a model's proposed change, whatever format it arrived in.
type Proposal struct {
	Summary string       `json:"summary"`
	Files   []FileChange `json:"files"`
	// Verification lists shell commands that check the change (tests,
	// build). The caller runs them through the permission gate after Apply.
	Verification []string `json:"verification"`
	Risks        []string `json:"risks"`
	// Format records which parser produced the proposal.
	Format Format `json:"-"`
}

// FileChange is the proposal for one file.
type FileChange struct {
	Path      string    `json:"path"`
	Operation Operation `json:"operation"`
	// NewPath is the destination of a rename.
	NewPath string `json:"new_path,omitempty"`
	// BaseSHA256 is the hex SHA-256 of the file content the model saw. When
	// set and the file has changed since, the proposal is refused as stale.
	BaseSHA256 string `json:"base_sha256,omitempty"`
	// Edits are applied in order to the file's content (modify, rename).
	Edits []Edit `json:"edits,omitempty"`
	// Content is the whole new content (add, or a whole-file replace).
	Content *string `json:"content,omitempty"`
	// Mode is a git file mode from a diff header ("100644", "100755"). Links
	// ("120000") and gitlinks ("160000") are refused by validation.
	Mode string `json:"mode,omitempty"`
}

// Edit replaces one located block of lines. Text uses "\n" line endings;
// the applier restores each file's own line endings.
type Edit struct {
	Search  string `json:"search"`
	Replace string `json:"replace"`
	// LineHint is the 1-based line the model thought Search starts at. It
	// only breaks ties between several exact matches; it never locates.
	LineHint int `json:"line_hint,omitempty"`
	// Anchor is an envelope "@@ anchor" line: the match must follow it.
	Anchor string `json:"anchor,omitempty"`
	// AtEOF marks an envelope hunk declared to end at the end of the file.
	AtEOF bool `json:"at_eof,omitempty"`
}

//go:embed schema.json
var schemaJSON string

//go:embed prompt.md
var promptText string

// JSONSchema returns the JSON schema of a Proposal for providers with
// structured output.
func JSONSchema() string { return schemaJSON }

// PromptText returns the instructions for models without structured output:
// it asks for search/replace blocks plus SUMMARY/VERIFY/RISK lines, which
// Parse reads back.
func PromptText() string { return promptText }
