package tui

import (
	"strings"
	"testing"
)

// TestReviewFitsShortWindows: wherever the plain dialog fits, the review
// keeps its bottom border, the status bar, the position line and every
// answer key on screen, and says that the diff scrolls.
func TestReviewFitsShortWindows(t *testing.T) {
	for _, size := range [][2]int{{60, 16}, {50, 12}, {80, 24}, {40, 10}} {
		w, h := size[0], size[1]
		m := testModel(t, newFake(), w, h)
		prop, req := reviewProposal()
		m.feed(prop, req)
		s := m.screen()
		lines := strings.Split(s, "\n")
		if len(lines) != h {
			t.Errorf("%dx%d: the screen has %d lines:\n%s", w, h, len(lines), s)
		}
		want := []string{"╰", "alpha/a-1", "y apply", "n/esc reject", "m ", "↑↓ scroll · lines 1–"}
		if w >= 50 {
			want = append(want, "file 1/4")
		}
		for _, want := range want {
			if !strings.Contains(s, want) {
				t.Errorf("%dx%d: %q is missing:\n%s", w, h, want, s)
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "alpha/a-1") {
			t.Errorf("%dx%d: the status bar is not the last line:\n%s", w, h, s)
		}
		// The keys still answer.
		m.press("n")
		if m.review != nil {
			t.Errorf("%dx%d: n did not answer the review", w, h)
		}
	}
}

// TestReviewGrowsBackAfterAResize: scrolled to the end in a short window,
// the review shows the whole diff from its first line once the window is
// tall enough, with no blank lines under it.
func TestReviewGrowsBackAfterAResize(t *testing.T) {
	m := testModel(t, newFake(), 80, 20)
	prop, req := reviewProposal()
	m.feed(prop, req)
	for range 20 {
		m.press("pgdown")
	}
	if m.review.dv.top == 0 {
		t.Fatal("pgdown did not scroll; the test does not exercise the resize")
	}
	m.update(teaSize(80, 70))
	s := m.screen()
	if !strings.Contains(s, "package main") || strings.Contains(s, "↑↓ scroll") {
		t.Fatalf("after growing, the diff's start is still hidden:\n%s", s)
	}
	if strings.Contains(s, "│"+strings.Repeat(" ", 78)+"│") {
		t.Fatalf("blank lines in the grown review:\n%s", s)
	}
}

// TestReviewJumpStaysInATallWindow: in a window taller than the diff, a
// jump to a later hunk stays there frame after frame (the scroll line it
// brings must not be taken for a window that grew).
func TestReviewJumpStaysInATallWindow(t *testing.T) {
	m := testModel(t, newFake(), 120, 70)
	prop, req := reviewProposal()
	m.feed(prop, req)
	m.screen()
	m.press("]")
	m.screen()
	m.screen()
	if s := m.screen(); !strings.Contains(s, "hunk 2/2") {
		t.Fatalf("the second hunk did not stay on screen:\n%s", s)
	}
}
