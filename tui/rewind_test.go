package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recordingRewinder lists fixed turns and records what it is asked.
type recordingRewinder struct {
	fakeUndoer
	points   []RewindPoint
	files    []int64
	convs    []int64
	filesErr error
}

func (r *recordingRewinder) RewindPoints(context.Context) ([]RewindPoint, error) {
	return r.points, nil
}

func (r *recordingRewinder) RewindFiles(_ context.Context, turn int64) (string, error) {
	r.files = append(r.files, turn)
	if r.filesErr != nil {
		return "", r.filesErr
	}
	return fmt.Sprintf("rewound the files to before turn %d", turn), nil
}

func (r *recordingRewinder) RewindConversation(_ context.Context, turn int64) error {
	r.convs = append(r.convs, turn)
	return nil
}

func twoTurns() *recordingRewinder {
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	return &recordingRewinder{points: []RewindPoint{
		{Turn: 1, Prompt: "add a greeting to main.go", Started: t0, Files: []string{"main.go"}},
		{Turn: 2, Prompt: "now run the formatter over\nthe whole tree", Started: t0.Add(3 * time.Minute), Files: []string{"main.go", "util/strings.go", "new.txt"}},
	}}
}

// TestRewindDialogGolden renders the list of turns and the confirmation
// at 80x24 and 120x40.
func TestRewindDialogGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprint(size[0]), func(t *testing.T) {
			m := testModel(t, newFake(), size[0], size[1])
			m.ext.undo = twoTurns()
			m.command("/rewind")
			golden(t, "rewind_list", size[0], m.View().Content)
			m.press("down", "enter")
			golden(t, "rewind_confirm", size[0], m.View().Content)
		})
	}
}

// TestRewindAcrossTwoTurns: choosing the older of two turns confirms with
// the files of both, and the second choice rewinds the conversation too.
func TestRewindAcrossTwoTurns(t *testing.T) {
	r := twoTurns()
	m := testModel(t, newFake(), 100, 30)
	m.ext.undo = r
	m.command("/rewind")
	s := m.screen()
	if i, j := strings.Index(s, "turn 2"), strings.Index(s, "turn 1"); i < 0 || j < 0 || i > j {
		t.Fatalf("turns are not listed newest first:\n%s", s)
	}
	m.press("down", "enter")
	s = m.screen()
	for _, want := range []string{"Rewind to before turn 1", "main.go", "new.txt", "util/strings.go", "restore the files and the conversation"} {
		if !strings.Contains(s, want) {
			t.Fatalf("confirmation lacks %q:\n%s", want, s)
		}
	}
	// esc goes back to the list, and esc again closes it: nothing ran.
	m.press("esc", "esc")
	if m.rewind != nil || len(r.files) != 0 {
		t.Fatalf("esc: dialog %v, rewinds %v", m.rewind, r.files)
	}
	// Files only: the first choice.
	m.command("/rewind")
	m.press("enter", "enter")
	if len(r.files) != 1 || r.files[0] != 2 || len(r.convs) != 0 {
		t.Fatalf("files only: files %v conversation %v", r.files, r.convs)
	}
	if s := m.screen(); !strings.Contains(s, "rewound the files to before turn 2") {
		t.Fatalf("no result shown:\n%s", s)
	}
	// Files and conversation: the second choice, across both turns.
	m.command("/rewind")
	m.press("down", "enter", "down", "enter")
	if len(r.files) != 2 || r.files[1] != 1 || len(r.convs) != 1 || r.convs[0] != 1 {
		t.Fatalf("both: files %v conversation %v", r.files, r.convs)
	}
	if s := m.screen(); !strings.Contains(s, "the conversation continues from before turn 1") {
		t.Fatalf("no result shown:\n%s", s)
	}
	// Cancel is the third choice.
	m.command("/rewind")
	m.press("enter", "down", "down", "enter")
	if len(r.files) != 2 || m.rewind == nil || m.rewind.confirming {
		t.Fatalf("cancel: files %v, dialog %+v", r.files, m.rewind)
	}
	m.press("esc")
}

// TestRewindRefusalIsShownAndKeepsTheConversation: a refusal (a file
// changed outside kz) names the file and rewinds no conversation.
func TestRewindRefusalIsShownAndKeepsTheConversation(t *testing.T) {
	r := twoTurns()
	r.filesErr = errors.New("cannot undo checkpoint_2: main.go changed after it")
	m := testModel(t, newFake(), 100, 30)
	m.ext.undo = r
	m.command("/rewind")
	m.press("enter", "c")
	if s := m.screen(); !strings.Contains(s, "rewind refused: cannot undo checkpoint_2: main.go changed after it") || len(r.convs) != 0 {
		t.Fatalf("conversation %v:\n%s", r.convs, s)
	}
	// Without a Rewinder, /rewind says it is not available.
	m = testModel(t, newFake(), 100, 30)
	m.ext.undo = &fakeUndoer{}
	m.command("/rewind")
	if s := m.screen(); !strings.Contains(s, "rewind is not available here") {
		t.Fatalf("no notice:\n%s", s)
	}
}
