// Package cliflag holds what kz's command line needs on top of the flag
// package: flag values that say what a good value looks like, and the
// flag package's errors rewritten as one line naming flags the way kz's
// help writes them (-p, but --mode).
package cliflag

import (
	"flag"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Dashed writes a flag as the help does: -p, but --mode.
func Dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Empty returns the first of names that was given on the command line
// with an empty value, or "".
func Empty(fs *flag.FlagSet, names ...string) string {
	found := ""
	fs.Visit(func(f *flag.Flag) {
		if found == "" && slices.Contains(names, f.Name) && strings.TrimSpace(f.Value.String()) == "" {
			found = f.Name
		}
	})
	return found
}

// The flag package's own messages name flags with one dash and say
// "parse error" for a bad number. The expressions are compiled on first
// use, so that every kz process does not pay for them at start.
var (
	undefined = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	})
	noValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	})
	badValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^invalid (?:boolean )?value "((?s).*)" for (?:flag )?-+([^:]+): ((?s).*)$`)
	})
)

// Message turns an error of flag.FlagSet.Parse into one line.
func Message(err error) string {
	msg := err.Error()
	if m := undefined().FindStringSubmatch(msg); m != nil {
		return "unknown flag " + Dashed(m[1])
	}
	if m := noValue().FindStringSubmatch(msg); m != nil {
		return Dashed(m[1]) + " needs a value"
	}
	if m := badValue().FindStringSubmatch(msg); m != nil {
		why := m[3]
		if strings.HasSuffix(why, "parse error") || strings.HasSuffix(why, "invalid syntax") {
			why = fmt.Sprintf("%q is not a valid value", m[1])
		}
		return Dashed(m[2]) + ": " + strings.ReplaceAll(why, "\n", " ")
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

// Int is a whole-number flag with a readable error.
type Int struct{ P *int }

func (f Int) String() string {
	if f.P == nil {
		return "0"
	}
	return strconv.Itoa(*f.P)
}

// Set implements flag.Value.
func (f Int) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*f.P = n
	return nil
}

// USD is an amount of US dollars: a finite number. NaN and Inf parse as
// floats but would silently disable a budget, so they are refused.
type USD struct{ P *float64 }

func (f USD) String() string {
	if f.P == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.P, 'f', -1, 64)
}

// Set implements flag.Value.
func (f USD) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%q is not an amount of US dollars (e.g. 0.50; 0: no limit)", s)
	}
	*f.P = x
	return nil
}

// Duration is a duration flag whose error says which units to use.
type Duration struct{ P *time.Duration }

func (f Duration) String() string {
	if f.P == nil {
		return "0s"
	}
	return f.P.String()
}

// Set implements flag.Value.
func (f Duration) Set(s string) error {
	v := strings.TrimSpace(s)
	d, err := time.ParseDuration(v)
	if err != nil {
		if _, nerr := strconv.ParseFloat(v, 64); nerr == nil {
			return fmt.Errorf("%q is not a duration; use a unit, e.g. %ss or 10m", s, v)
		}
		return fmt.Errorf("%q is not a duration; use a unit, e.g. 90s, 10m or 1h30m", s)
	}
	*f.P = d
	return nil
}
