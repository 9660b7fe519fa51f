// Package app wires kz together: it builds the configuration, the store,
// the permission gate, the OS sandbox, the runtimes and the session that
// a command runs on, and it holds every adapter between packages (the
// store-backed snapshots and undo, the grants, the TUI's mentions and
// session list, the demo's runtimes), so that the domain packages never
// import each other to wire themselves. Only package main's commands
// (internal/cli) import it.
package app
