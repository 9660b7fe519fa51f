package cli

// Flag values and messages shared by kz's commands.

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/kaizen-code/kz/internal/cliflag"
	"github.com/kaizen-code/kz/tools/permission"
)

// durationFlag is cliflag.Duration that tells a duration too long for
// time.Duration (--timeout 9999999h) from one without a unit:
// time.ParseDuration reports both as invalid.
type durationFlag struct{ cliflag.Duration }

// Set implements flag.Value.
func (f durationFlag) Set(s string) error {
	err := f.Duration.Set(s)
	// The syntax time.ParseDuration accepts, compiled only for a bad
	// value so that it costs program start nothing.
	if err != nil && regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`).MatchString(strings.TrimSpace(s)) {
		return fmt.Errorf("%q is out of range (at most %s)", s, time.Duration(math.MaxInt64).Truncate(time.Hour))
	}
	return err
}

// quoteArgs joins args for a command line to copy, quoting each that the
// shell would split or expand.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// requireValues refuses a flag of names given an empty value (--mode ""),
// which would otherwise silently mean "not given": a default mode, a new
// session instead of the one asked for, the default data dir.
func requireValues(fs *flag.FlagSet, names ...string) error {
	if name := cliflag.Empty(fs, names...); name != "" {
		return usagef("%s needs a value, not an empty one", cliflag.Dashed(name))
	}
	return nil
}

// cliRules are the permission rules given with --allow, --ask and --deny.
// They are the gate's CLI source: checked like user rules, and recorded
// as source "cli" in every decision they make.
type cliRules struct{ permission.Rules }

// register adds the three repeatable rule flags to fs.
func (r *cliRules) register(fs *flag.FlagSet) {
	fs.Var(ruleFlag{action: permission.ActionAllow, list: &r.Allow}, "allow", "")
	fs.Var(ruleFlag{action: permission.ActionAsk, list: &r.Ask}, "ask", "")
	fs.Var(ruleFlag{action: permission.ActionDeny, list: &r.Deny}, "deny", "")
}

// ruleFlag is one repeatable rule flag. Each value is checked with the
// gate's own rule parser when it is given, so a malformed rule is a usage
// error naming the flag instead of a failure deep in the gate.
type ruleFlag struct {
	action permission.Action
	list   *[]string
}

func (f ruleFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ", ")
}

func (f ruleFlag) Set(v string) error {
	if _, err := permission.ParseRule(v, f.action, permission.SourceCLI); err != nil {
		// The flag package prefixes this with the flag's name and value.
		return err
	}
	*f.list = append(*f.list, v)
	return nil
}

// listFlag collects every value of a repeatable flag, in order.
type listFlag struct{ list *[]string }

func (f listFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ", ")
}

func (f listFlag) Set(v string) error {
	if v == "" {
		return errors.New("needs a value")
	}
	*f.list = append(*f.list, v)
	return nil
}
