// Package cli is kz's command line: one file per command, each a Command
// in the table below in the style of Go's own cmd/go (its usage line, its
// short and long help, its flags beside it, its run function), and the
// process around them (process.go: signals, a closed output, exit codes).
//
// A command parses its flags and maps outcomes to messages and exit
// codes; what it runs on (configuration, store, gate, sandbox, runtimes,
// session) is built by internal/app, never here.
package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// A Command is one of kz's commands.
type Command struct {
	// Name is the word that selects the command: kz NAME. The root
	// command (kz and kz -p) has none.
	Name string
	// UsageLine is how the command is called, as its usage errors and
	// kz help NAME print it.
	UsageLine string
	// Short is the command's entry in kz --help: each way to call it,
	// with what it does.
	Short []Usage
	// Long is the rest of kz help NAME: what the command does, and how.
	Long string
	// Run runs the command on the arguments after its name. Each command
	// parses its own flags, declared beside it: their syntax (flags after
	// an id, a subcommand first) and their messages differ.
	Run func(ctx context.Context, inv *Invocation, args []string) error
}

// Usage is one way to call a command in kz --help, and what it does. Each
// may span lines: continuation lines carry their own indent.
type Usage struct{ Line, Does string }

// Invocation is what a command runs with besides its arguments.
type Invocation struct {
	// Command is the command run; Name is the word that named it (version
	// or --version), empty for the root command.
	Command        *Command
	Name           string
	Stdout, Stderr io.Writer
}

// commands is kz's command table, in the order kz --help lists them. The
// root command (kz, kz -p) comes first and runs when no command is named.
// It is filled in init: the root command looks commands up (kz --data-dir
// D sessions is refused with "subcommands come first"), so the table
// would otherwise be part of its own initialisation.
var commands []*Command

func init() {
	commands = []*Command{cmdRoot, cmdSessions, cmdRuntimes, cmdDoctor, cmdSetup, cmdTrust, cmdUndo, cmdPolicy, cmdMCP, cmdVersion}
}

// Version is kz's version; main sets it from the build.
var Version = "0.1.0-dev"

// lookup returns the command named name, or nil.
func lookup(name string) *Command {
	for _, c := range commands {
		if c.Name != "" && c.Name == name {
			return c
		}
	}
	return nil
}

// dispatch runs the command args name: a command's name first, or the
// root command's flags.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	inv := &Invocation{Command: cmdRoot, Stdout: stdout, Stderr: stderr}
	if len(args) > 0 {
		switch name := args[0]; {
		case name == "help" || name == "-h" || name == "--help":
			return help(stdout, args[1:])
		case name == "--version":
			inv.Command, inv.Name, args = cmdVersion, name, args[1:]
		case !strings.HasPrefix(name, "-"):
			if inv.Command = lookup(name); inv.Command == nil {
				return usagef("unknown command %q", name)
			}
			inv.Name, args = name, args[1:]
		}
	}
	return inv.Command.Run(ctx, inv, args)
}

// help prints kz --help, or with the name of a command (kz help undo),
// that command's usage and long help.
func help(w io.Writer, args []string) error {
	if len(args) == 1 {
		if c := lookup(args[0]); c != nil {
			_, err := fmt.Fprintf(w, "usage: %s\n\n%s", c.UsageLine, c.Long)
			return err
		}
	}
	_, err := io.WriteString(w, overview())
	return err
}

// overviewIntro and overviewOutro frame kz --help around the commands'
// usages and the root command's long help.
const (
	overviewIntro = "kz — a terminal coding assistant over many agent runtimes\n\nUsage:\n"
	overviewOutro = "\nConfiguration: $XDG_CONFIG_HOME/kz/config.toml and .kz/config.toml (see README.md).\n"
	// usageColumn is where what a usage does starts, after the indent.
	usageColumn = 33
)

// overview is kz --help: every command's usages, then the root command's
// flags and exit codes.
func overview() string {
	var b strings.Builder
	b.WriteString(overviewIntro)
	for _, c := range commands {
		for _, u := range c.Short {
			writeUsage(&b, u)
		}
	}
	b.WriteString("\n")
	b.WriteString(cmdRoot.Long)
	b.WriteString(overviewOutro)
	return b.String()
}

// writeUsage writes one usage of kz --help: the call, indented, with what
// it does in a column beside its last line, or under it when the line
// reaches the column.
func writeUsage(b *strings.Builder, u Usage) {
	lines := strings.Split(u.Line, "\n")
	last := lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		b.WriteString("  " + l + "\n")
	}
	does := strings.Split(u.Does, "\n")
	if u.Does == "" {
		does = nil
	}
	b.WriteString("  " + last)
	if len(does) > 0 && len(last) < usageColumn {
		b.WriteString(strings.Repeat(" ", usageColumn-len(last)) + does[0])
		does = does[1:]
	}
	b.WriteString("\n")
	for _, d := range does {
		b.WriteString("  " + strings.Repeat(" ", usageColumn) + d + "\n")
	}
}
