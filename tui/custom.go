package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// CustomCommand is a slash command defined by a markdown file: its
// Template is a prompt in which $ARGUMENTS is replaced by what follows the
// command. LoadCommands reads them; Options.Commands takes them.
type CustomCommand struct {
	Name        string
	Description string
	Template    string
	Source      string // the file it came from
}

// maxCommandBytes caps a command file: a prompt template, not a document.
const maxCommandBytes = 64 << 10

var commandName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
})

// LoadCommands reads the custom commands of dirs, in order: a later
// directory's command replaces an earlier one of the same name, so pass
// the user's directory first and the project's (only when the folder is
// trusted) after it. A missing directory is not an error; a file that
// cannot be used is skipped and reported in the returned error, which
// does not stop the others.
func LoadCommands(dirs ...string) ([]CustomCommand, error) {
	byName := map[string]int{}
	var out []CustomCommand
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("commands: %w", err))
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			name := strings.ToLower(strings.TrimSuffix(e.Name(), ".md"))
			path := filepath.Join(dir, e.Name())
			if !commandName().MatchString(name) {
				errs = append(errs, fmt.Errorf("command %s: the name must be letters, digits, - and _", path))
				continue
			}
			if isBuiltin(name) {
				errs = append(errs, fmt.Errorf("command %s: /%s is built in", path, name))
				continue
			}
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || info.Size() > maxCommandBytes {
				errs = append(errs, fmt.Errorf("command %s: not a regular file of at most %d bytes", path, maxCommandBytes))
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("command %s: %w", path, err))
				continue
			}
			c := parseCommandFile(name, string(data))
			c.Source = path
			if i, ok := byName[name]; ok {
				out[i] = c
				continue
			}
			byName[name] = len(out)
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}

// parseCommandFile reads an optional front matter block ("---",
// "description: …", "---") and the template after it.
func parseCommandFile(name, text string) CustomCommand {
	c := CustomCommand{Name: name, Template: text}
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		if head, body, ok := strings.Cut(rest, "\n---\n"); ok {
			c.Template = body
			for _, l := range strings.Split(head, "\n") {
				if d, ok := strings.CutPrefix(l, "description:"); ok {
					c.Description = strings.TrimSpace(d)
				}
			}
		}
	}
	c.Template = strings.TrimSpace(c.Template)
	if c.Description == "" {
		c.Description = "custom: " + truncateLine(oneLine(c.Template), 50)
	}
	return c
}

// isBuiltin says whether name is a built-in command, which a custom one
// may not replace.
func isBuiltin(name string) bool {
	for _, c := range slashCommands {
		if c.name == name {
			return true
		}
	}
	return false
}

// expand fills the template with the arguments. A template without
// $ARGUMENTS gets them appended, so nothing typed is lost.
func (c CustomCommand) expand(args string) string {
	if strings.Contains(c.Template, "$ARGUMENTS") {
		return strings.ReplaceAll(c.Template, "$ARGUMENTS", args)
	}
	if args == "" {
		return c.Template
	}
	return c.Template + "\n\n" + args
}

// asSlash turns a custom command into an entry of the command table: it
// sends its expanded prompt like a typed message (queued while a turn
// runs).
func (c CustomCommand) asSlash() slashCommand {
	return slashCommand{name: c.Name, args: "[args]", desc: c.Description, run: func(m *Model, args string) tea.Cmd {
		text := c.expand(args)
		if text == "" {
			m.tr.notice("/"+c.Name+" is empty ("+c.Source+")", "warn")
			return nil
		}
		if m.status.running || m.submitting || len(m.queue) > 0 {
			m.queue = append(m.queue, queued{text: text})
			return nil
		}
		return m.submit(text)
	}}
}
