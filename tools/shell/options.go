package shell

import (
	"sort"
	"strings"
	"sync"
)

// This file parses a program's arguments the way the program itself does
// (GNU getopt_long for the GNU tools): abbreviated long options, `--opt=v`
// and `--opt v`, grouped short flags, attached short values, `--`, options
// after operands. A model lists every option a program has; an option the
// model does not know, in any spelling, is reported, so that a command
// using it is never proven harmless.

// ArgKind says whether an option takes a value.
type ArgKind string

// Option argument kinds, as getopt_long knows them.
const (
	ArgNone     ArgKind = "none"
	ArgRequired ArgKind = "required"
	// ArgOptional takes a value only when attached (`-xV`, `--opt=V`).
	ArgOptional ArgKind = "optional"
)

// Effect is what an option makes a program do beyond shaping its output.
type Effect string

// Option effects. An option without one only changes what is printed.
const (
	EffectNone Effect = ""
	// EffectRead: the value names a file the program reads.
	EffectRead Effect = "read"
	// EffectStat: the value names a path whose metadata (times, size,
	// mode) the program reads, not its content (touch -r, find -newer).
	EffectStat Effect = "stat"
	// EffectReadList: the value names a file that lists more files to
	// read (--files0-from): the files read cannot be known.
	EffectReadList Effect = "read-list"
	// EffectWrite: the value names a file the program writes.
	EffectWrite Effect = "write"
	// EffectWriteDir: the program writes files below the named directory.
	EffectWriteDir Effect = "write-dir"
	// EffectWrites: the program writes files named elsewhere (sed -i).
	EffectWrites Effect = "writes"
	// EffectExec: the program runs code or a program the option names.
	EffectExec Effect = "exec"
	// EffectChdir: the value is a directory the program works in.
	EffectChdir Effect = "chdir"
	// EffectConfig: the program loads configuration (or a repository)
	// that can change what it runs; it is steered by a file.
	EffectConfig Effect = "config"
	// EffectSecret: the program prints secrets (the environment).
	EffectSecret Effect = "secret"
)

// Flag is one option as the program understands it.
type Flag struct {
	// Name is the canonical spelling: the first long name ("--recursive")
	// or, for an option without one, the short name ("-r").
	Name string `json:"name"`
	// Value is the option's argument; HasValue says whether it has one.
	Value    string `json:"value,omitempty"`
	HasValue bool   `json:"has_value,omitempty"`
	// ValueDynamic is set when the value is not a literal.
	ValueDynamic bool `json:"value_dynamic,omitempty"`
	// Index is the argument the option starts in (its value may be in
	// the next one).
	Index int `json:"index"`
	// Global is set for an option before the sub-command (`git -C x`).
	Global bool `json:"global,omitempty"`
	// Effect is what the option does (see Effect).
	Effect Effect `json:"effect,omitempty"`
}

// Parsed is a program's arguments as the program parses them.
type Parsed struct {
	// Model is set when a model parsed every argument: the program's and,
	// where it has sub-commands, the sub-command's.
	Model bool `json:"model"`
	// Unknown lists options the model does not know, as written; a word
	// that holds one (`-xQ`) is listed once.
	Unknown []string `json:"unknown,omitempty"`
	// Flags are the options found, in order, canonical.
	Flags []Flag `json:"flags,omitempty"`
	// Operands are indexes into args of the non-option arguments, the
	// sub-command words excluded.
	Operands []int `json:"operands,omitempty"`
	// Sub is the sub-command after the global options (git, npm, go,
	// cargo, docker, kubectl, ...); SubIndex is its index in args (-1
	// when there is none). Subs lists the indexes of nested sub-command
	// words (`git stash list`, `docker compose up`), Sub's first.
	Sub      string `json:"sub,omitempty"`
	SubIndex int    `json:"sub_index"`
	Subs     []int  `json:"subs,omitempty"`
	// MaybeOptions are indexes of non-literal arguments in option
	// position that may expand to options (`$x`, `*`): they are counted
	// as operands too.
	MaybeOptions []int `json:"maybe_options,omitempty"`
}

// Has reports whether a flag with the canonical name was given.
func (p Parsed) Has(name string) bool {
	for _, f := range p.Flags {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Values returns the values of every flag with the canonical name.
func (p Parsed) Values(name string) []string {
	var out []string
	for _, f := range p.Flags {
		if f.Name == name && f.HasValue {
			out = append(out, f.Value)
		}
	}
	return out
}

// Known reports whether a model parsed every argument and every option
// was known: the arguments mean what the model says.
func (p Parsed) Known() bool {
	return p.Model && len(p.Unknown) == 0
}

// modelOpt is one option of a model.
type modelOpt struct {
	canon  string
	arg    ArgKind
	effect Effect
}

// Model describes a program's options and sub-commands.
type Model struct {
	name  string
	short map[byte]*modelOpt
	long  map[string]*modelOpt
	// longNames are the long names, sorted, for abbreviation lookup.
	longNames []string
	// permute: options may follow operands (GNU); otherwise the first
	// operand ends the options (POSIX, `env`, `xargs`, sub-command CLIs'
	// global options).
	permute bool
	// exactLong: long options must be spelled out (cobra, clap, nopt
	// parsers do not take abbreviations... or take them differently, so
	// an abbreviation is unknown rather than guessed).
	exactLong bool
	// numeric is the canonical option `-NUM` stands for (head -5,
	// grep -3); "" when digits are not options.
	numeric string
	// numericWord: `-NUM` is the whole word, suffix letters included
	// (the obsolete `head -5c`), not a cluster.
	numericWord bool
	// subs are the sub-commands; nil when the program has none. A
	// sub-command without a model maps to nil.
	subs map[string]*Model
	// lazySubs builds, once, the model of a sub-command that subs maps
	// to nil (subModel). It is filled when the models are built and only
	// read after, so concurrent analyses may share it.
	lazySubs map[string]func() *Model
	// custom parses programs whose syntax is not getopt's (find, ps,
	// test, echo, dd).
	custom func(args []string, dyn []bool) Parsed
}

// newModel builds a model from option specs of the form
// "n,lines=" — names separated by commas (one letter: a short option,
// more: a long one), then "=" for a required value or "?" for an
// optional one, then "@name" when the canonical name is another option's
// (`-F` is `--classify` but takes no value), then ":" and an effect
// letter: r read, m read metadata, l read a list of files, w write, d write-dir, W writes,
// x exec, c chdir, C config, s secret.
func newModel(name string, permute bool, specs ...string) *Model {
	m := &Model{name: name, short: map[byte]*modelOpt{}, long: map[string]*modelOpt{}, permute: permute}
	m.add(specs...)
	return m
}

func (m *Model) add(specs ...string) *Model {
	for _, s := range specs {
		body, eff, _ := strings.Cut(s, ":")
		body, canon, _ := strings.Cut(body, "@")
		arg := ArgNone
		switch {
		case strings.HasSuffix(body, "="):
			arg, body = ArgRequired, strings.TrimSuffix(body, "=")
		case strings.HasSuffix(body, "?"):
			arg, body = ArgOptional, strings.TrimSuffix(body, "?")
		}
		names := strings.Split(body, ",")
		o := &modelOpt{arg: arg, effect: effectLetters[eff]}
		for _, n := range names {
			if len(n) > 1 {
				o.canon = "--" + n
				break
			}
		}
		switch {
		case canon != "":
			o.canon = "--" + canon
		case o.canon == "":
			o.canon = "-" + names[0]
		}
		for _, n := range names {
			// The first definition of a name wins: a command's own
			// options come before those it shares (git shortlog's -n is
			// --numbered, not the revision walker's --max-count).
			if len(n) == 1 {
				if _, dup := m.short[n[0]]; !dup {
					m.short[n[0]] = o
				}
			} else if _, dup := m.long[n]; !dup {
				m.longNames = append(m.longNames, n)
				m.long[n] = o
			}
		}
	}
	sort.Strings(m.longNames)
	return m
}

var effectLetters = map[string]Effect{"": EffectNone, "r": EffectRead, "m": EffectStat, "l": EffectReadList, "w": EffectWrite, "d": EffectWriteDir,
	"W": EffectWrites, "x": EffectExec, "c": EffectChdir, "C": EffectConfig, "s": EffectSecret}

// lookupLong finds a long option by its name or, as getopt_long does, by
// an unambiguous prefix of it (prefixes of several names that are the same
// option are not ambiguous).
func (m *Model) lookupLong(name string) *modelOpt {
	if o, ok := m.long[name]; ok {
		return o
	}
	if m.exactLong || name == "" {
		return nil
	}
	k := sort.SearchStrings(m.longNames, name)
	var found *modelOpt
	for ; k < len(m.longNames) && strings.HasPrefix(m.longNames[k], name); k++ {
		o := m.long[m.longNames[k]]
		if found != nil && found != o {
			return nil // ambiguous
		}
		found = o
	}
	return found
}

// models maps a program's base name to its model. It is filled on first
// use (modelTable), not at package init: building every model costs
// about 10 ms, which each kz process, `kz version` included, would
// otherwise pay before main runs. Only register writes it, and only from
// inside buildModels.
var models = map[string]*Model{}

// modelsOnce builds the models once (buildModels).
var modelsOnce sync.Once

// buildModels runs the builders in the order they depend on each other
// (the git builders extend the git model the CLI builders register).
func buildModels() {
	initCLIModels()
	initCoreutilsModels()
	initFindModels()
	initGitModels()
	initSearchModels()
}

// Prepare builds the models now if they are not built yet. The gate calls
// it in the background once a runtime reports its session started
// (permission.Gate.Prepare), so that the gate's first command of the
// session does not wait the millisecond the build takes (git's
// sub-commands are built as commands use them: lazyGitSubs).
func Prepare() { modelsOnce.Do(buildModels) }

// modelTable returns the models, built on first use.
func modelTable() map[string]*Model {
	Prepare()
	return models
}

func register(m *Model, aliases ...string) *Model {
	models[m.name] = m
	for _, a := range aliases {
		models[a] = m
	}
	return m
}

// ModelFor returns the model of a program by base name, or nil.
func ModelFor(prog string) *Model { return modelTable()[baseName(prog)] }

func baseName(p string) string {
	if k := strings.LastIndexByte(p, '/'); k >= 0 {
		return p[k+1:]
	}
	return p
}

// ParseArgs parses a program's arguments (after the program name) with
// its model. dyn[i] marks arguments that are not literals (nil: all are).
// Without a model, Model is false and every argument is an operand.
func ParseArgs(prog string, args []string, dyn []bool) Parsed {
	if dyn == nil {
		dyn = make([]bool, len(args))
	}
	m := modelTable()[baseName(prog)]
	if m == nil {
		p := Parsed{SubIndex: -1}
		for i := range args {
			p.Operands = append(p.Operands, i)
		}
		return p
	}
	return m.Parse(args, dyn)
}

// Parse parses args with the model.
func (m *Model) Parse(args []string, dyn []bool) Parsed {
	if dyn == nil {
		dyn = make([]bool, len(args))
	}
	if m.custom != nil {
		return m.custom(args, dyn)
	}
	p := Parsed{Model: true, SubIndex: -1}
	m.parseInto(&p, args, dyn, 0, true)
	return p
}

// dynamicPrefix returns the literal start of a non-literal argument: the
// text before its first expansion or pattern character.
func dynamicPrefix(a string) string {
	if k := strings.IndexAny(a, "$`*?[{"); k >= 0 {
		return a[:k]
	}
	return a
}

// parseInto parses args[off:]-relative words (indexes reported are off+i)
// into p. top is set for the program's own level, whose options are global
// when a sub-command follows.
func (m *Model) parseInto(p *Parsed, args []string, dyn []bool, off int, top bool) {
	firstFlag := len(p.Flags)
	markGlobal := func() {
		for k := firstFlag; k < len(p.Flags); k++ {
			p.Flags[k].Global = true
		}
	}
	operandsOnly := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		isOpt := !operandsOnly && len(a) > 1 && a[0] == '-'
		if dyn[i] && !operandsOnly {
			pre := dynamicPrefix(a)
			switch {
			case pre == "":
				// `$x` or `*` may expand to an option or to several.
				p.MaybeOptions = append(p.MaybeOptions, off+i)
				isOpt = false
			case len(pre) < 2 || pre[0] != '-':
				isOpt = false
			}
		}
		if !isOpt {
			if !operandsOnly && m.subs != nil {
				m.sub(p, args, dyn, off, i, markGlobal)
				return
			}
			p.Operands = append(p.Operands, off+i)
			if !m.permute {
				operandsOnly = true
			}
			continue
		}
		if a == "--" {
			operandsOnly = true
			if m.subs != nil {
				// `git -- x`: what follows is not a sub-command git knows.
				p.Model = false
			}
			continue
		}
		if strings.HasPrefix(a, "--") {
			i = m.longOpt(p, args, dyn, off, i)
			continue
		}
		i = m.shortOpts(p, args, dyn, off, i)
	}
}

// subModel returns the model of sub-command name, building it on first
// use; ok is false when the program has no such sub-command.
func (m *Model) subModel(name string) (sm *Model, ok bool) {
	sm, ok = m.subs[name]
	if ok && sm == nil {
		if build := m.lazySubs[name]; build != nil {
			sm = build()
		}
	}
	return sm, ok
}

// sub handles the first operand of a program with sub-commands.
func (m *Model) sub(p *Parsed, args []string, dyn []bool, off, i int, markGlobal func()) {
	if dyn[i] {
		p.Model = false
		p.Operands = append(p.Operands, off+i)
		for k := i + 1; k < len(args); k++ {
			p.Operands = append(p.Operands, off+k)
		}
		return
	}
	markGlobal()
	if p.Sub == "" {
		p.Sub, p.SubIndex = args[i], off+i
	}
	p.Subs = append(p.Subs, off+i)
	sm, ok := m.subModel(args[i])
	if !ok || sm == nil {
		p.Model = false
		for k := i + 1; k < len(args); k++ {
			p.Operands = append(p.Operands, off+k)
		}
		return
	}
	if sm.custom != nil {
		q := sm.custom(args[i+1:], dyn[i+1:])
		p.Model = p.Model && q.Model
		p.Unknown = append(p.Unknown, q.Unknown...)
		for _, f := range q.Flags {
			f.Index += off + i + 1
			p.Flags = append(p.Flags, f)
		}
		for _, o := range q.Operands {
			p.Operands = append(p.Operands, o+off+i+1)
		}
		for _, o := range q.MaybeOptions {
			p.MaybeOptions = append(p.MaybeOptions, o+off+i+1)
		}
		return
	}
	sm.parseInto(p, args[i+1:], dyn[i+1:], off+i+1, false)
}

func (m *Model) longOpt(p *Parsed, args []string, dyn []bool, off, i int) int {
	a := args[i]
	name, val, hasVal := strings.Cut(a[2:], "=")
	if dyn[i] && !hasVal {
		// `--out$x`: the name itself is not known.
		p.Unknown = append(p.Unknown, a)
		return i
	}
	o := m.lookupLong(name)
	if o == nil {
		p.Unknown = append(p.Unknown, a)
		return i
	}
	f := Flag{Name: o.canon, Index: off + i, Effect: o.effect}
	switch o.arg {
	case ArgNone:
		if hasVal {
			// getopt refuses a value here; the program exits, but the
			// model cannot say so for sure.
			p.Unknown = append(p.Unknown, a)
			return i
		}
	case ArgRequired:
		switch {
		case hasVal:
			f.Value, f.HasValue, f.ValueDynamic = val, true, dyn[i]
		case i+1 < len(args):
			i++
			f.Value, f.HasValue, f.ValueDynamic = args[i], true, dyn[i]
		default:
			p.Unknown = append(p.Unknown, a)
			return i
		}
	case ArgOptional:
		if hasVal {
			f.Value, f.HasValue, f.ValueDynamic = val, true, dyn[i]
		}
	}
	p.Flags = append(p.Flags, f)
	return i
}

func (m *Model) shortOpts(p *Parsed, args []string, dyn []bool, off, i int) int {
	a := args[i]
	lit := a
	if dyn[i] {
		lit = dynamicPrefix(a)
	}
	for j := 1; j < len(lit); j++ {
		c := lit[j]
		if m.numeric != "" && c >= '0' && c <= '9' {
			if m.numericWord && j == 1 {
				p.Flags = append(p.Flags, Flag{Name: m.numeric, Value: a[1:], HasValue: true, ValueDynamic: dyn[i], Index: off + i})
				return i
			}
			k := j
			for k < len(lit) && lit[k] >= '0' && lit[k] <= '9' {
				k++
			}
			p.Flags = append(p.Flags, Flag{Name: m.numeric, Value: lit[j:k], HasValue: true, Index: off + i})
			j = k - 1
			continue
		}
		o := m.short[c]
		if o == nil {
			p.Unknown = append(p.Unknown, a)
			return i
		}
		f := Flag{Name: o.canon, Index: off + i, Effect: o.effect}
		switch o.arg {
		case ArgRequired:
			if rest := a[j+1:]; rest != "" {
				f.Value, f.HasValue, f.ValueDynamic = rest, true, dyn[i]
			} else if i+1 < len(args) {
				i++
				f.Value, f.HasValue, f.ValueDynamic = args[i], true, dyn[i]
			} else {
				p.Unknown = append(p.Unknown, a)
				return i
			}
			p.Flags = append(p.Flags, f)
			return i
		case ArgOptional:
			if rest := a[j+1:]; rest != "" {
				f.Value, f.HasValue, f.ValueDynamic = rest, true, dyn[i]
			}
			p.Flags = append(p.Flags, f)
			return i
		}
		p.Flags = append(p.Flags, f)
	}
	if dyn[i] && len(lit) < len(a) {
		// The non-literal rest of the cluster may hold any option.
		p.Unknown = append(p.Unknown, a)
	}
	return i
}
