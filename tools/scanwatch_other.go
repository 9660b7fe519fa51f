//go:build !linux

package tools

import (
	"errors"

	"github.com/kaizen-code/kz/tools/workspace"
)

// ChangeWatcher needs inotify; elsewhere there is none and every scan is
// a full one.
type ChangeWatcher struct{}

// NewChangeWatcher fails: change watching needs Linux.
func NewChangeWatcher(*workspace.Workspace) (*ChangeWatcher, error) {
	return nil, errors.New("change watching needs Linux's inotify")
}

// Changes always asks for a full scan.
func (w *ChangeWatcher) Changes() ([]string, bool) { return nil, true }

// FullScanStarted does nothing.
func (w *ChangeWatcher) FullScanStarted() {}

// Close does nothing.
func (w *ChangeWatcher) Close() error { return nil }

func (w *ChangeWatcher) watchDir(string)               {}
func (w *ChangeWatcher) setRules(string, []ignoreRule) {}
