package shell

import (
	"strings"
	"sync"
)

// classInfo is what kz knows about one program run with given arguments.
type classInfo struct {
	readOnly   bool
	writes     bool
	targets    []Target
	execs      []argv
	unprovable string
	// secrets are reasons the command prints secrets (the environment,
	// another process's memory).
	secrets []string
	// execCwdUnknown: the execs run in directories the analysis cannot
	// follow (find -execdir).
	execCwdUnknown bool
	// destructive is why the command destroys work (git reset --hard),
	// when destructiveSet says it was judged.
	destructive    string
	destructiveSet bool
}

type argv struct {
	words []string
	dyn   []bool
}

// classCtx carries one program's classification.
type classCtx struct {
	base string
	args []string
	dyn  []bool
	p    Parsed
	info classInfo
	// notProven is set when something makes the command not provably
	// read-only without making it unprovable.
	notProven bool
	// chdir is the directory the program resolves its operands from
	// (fd -C, rg has none), "" for the working directory.
	chdir string
}

func (c *classCtx) unprovable(why string) {
	if c.info.unprovable == "" {
		c.info.unprovable = why
	}
	c.notProven = true
}

func (c *classCtx) target(p string, dyn bool, op Op) *Target {
	if p == ProcSubstPath {
		// A pipe to analysed commands: a scratch target nobody records.
		return &Target{}
	}
	if c.chdir != "" && !isAbsPath(p) {
		p = strings.TrimSuffix(c.chdir, "/") + "/" + p
	}
	c.info.targets = append(c.info.targets, Target{Path: p, Op: op, Dynamic: dyn, Glob: dyn && isGlobOnly(p)})
	return &c.info.targets[len(c.info.targets)-1]
}

// read records operand i as a file whose content is read.
func (c *classCtx) read(i int) *Target { return c.target(c.args[i], c.dyn[i], OpRead) }

// meta records operand i as a path whose names or metadata are read.
func (c *classCtx) meta(i int) *Target {
	t := c.target(c.args[i], c.dyn[i], OpRead)
	t.Meta = true
	return t
}

func (c *classCtx) write(i int, op Op) {
	c.target(c.args[i], c.dyn[i], op)
	c.info.writes = true
	c.notProven = true
}

// isTempDir reports the system's temporary directories.
func isTempDir(p string) bool {
	p = strings.TrimSuffix(p, "/")
	return p == "/tmp" || p == "/var/tmp" || p == "/dev/shm"
}

// isAbsPath reports a path that does not depend on the working directory.
func isAbsPath(p string) bool {
	return strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/")
}

// isGlobOnly reports a non-literal word whose only expansions are patterns
// (globs and braces), which the gate can expand against the file system.
func isGlobOnly(p string) bool { return !strings.ContainsAny(p, "$`") }

// effects applies what the parsed options do.
func (c *classCtx) effects() {
	for _, f := range c.p.Flags {
		switch f.Effect {
		case EffectExec:
			c.unprovable(c.base + " " + f.Name + " runs a program or code")
		case EffectWrite:
			if f.HasValue {
				c.target(f.Value, f.ValueDynamic, OpWrite)
			}
			c.info.writes, c.notProven = true, true
		case EffectWriteDir:
			if f.HasValue && !f.ValueDynamic && isTempDir(f.Value) {
				// Scratch files in a temporary directory (sort -T /tmp),
				// which the sandbox makes private.
				c.info.writes, c.notProven = true, true
				continue
			}
			if f.HasValue {
				t := c.target(f.Value, f.ValueDynamic, OpWrite)
				t.Recursive = true
			}
			c.info.writes, c.notProven = true, true
		case EffectWrites:
			c.info.writes, c.notProven = true, true
		case EffectRead:
			if f.HasValue && f.Value != "-" {
				c.target(f.Value, f.ValueDynamic, OpRead)
			}
		case EffectStat:
			if f.HasValue {
				c.target(f.Value, f.ValueDynamic, OpRead).Meta = true
			}
		case EffectReadList:
			if f.HasValue && f.Value != "-" {
				c.target(f.Value, f.ValueDynamic, OpRead)
			}
			// The files the list names are read too: unknown here.
			c.target("<files listed in "+f.Value+">", true, OpRead).Glob = false
		case EffectConfig:
			// Configuration loaded from a file the model may control.
			c.notProven = true
		case EffectSecret:
			c.info.secrets = append(c.info.secrets, c.base+" "+f.Name+" prints the environment of processes")
		case EffectChdir:
			if f.HasValue {
				c.chdir = f.Value
				if f.ValueDynamic {
					c.notProven = true
				}
			}
		}
	}
	if len(c.p.Unknown) > 0 || !c.p.Model {
		c.notProven = true
	}
	for _, i := range c.p.MaybeOptions {
		if !isGlobOnly(c.args[i]) {
			// `$x` may expand to any option, such as one that writes.
			c.notProven = true
		}
	}
}

// finish turns the context into the classification of a program that is
// read-only unless its options or operands said otherwise.
func (c *classCtx) finish() classInfo {
	c.info.readOnly = !c.notProven && !c.info.writes && c.info.unprovable == ""
	return c.info
}

// operandReader says what a read-only program does with its operands.
type operandReader func(c *classCtx)

// readContent: every operand is a file whose content is read.
func readContent(c *classCtx) {
	for _, i := range c.p.Operands {
		if c.args[i] != "-" {
			c.read(i)
		}
	}
}

// readMeta: every operand is a path whose names or metadata are read; with
// none, the working directory.
func readMeta(c *classCtx) {
	for _, i := range c.p.Operands {
		c.meta(i)
	}
	if len(c.p.Operands) == 0 {
		c.target(".", false, OpRead).Meta = true
	}
}

// readNone: the operands are not paths (echo, printenv, id).
func readNone(*classCtx) {}

// readers are the programs that are read-only unless an option says
// otherwise, with what they do with their operands. The map is built on
// first use, so that every kz process does not pay for it at start.
var readers = sync.OnceValue(func() map[string]operandReader {
	return map[string]operandReader{
		"cat": readContent, "tac": readContent, "nl": readContent, "od": readContent, "fold": readContent,
		"expand": readContent, "unexpand": readContent, "cut": readContent, "paste": readContent,
		"comm": readContent, "join": readContent, "cmp": readContent, "diff": readDiff, "md5sum": readContent,
		"sha1sum": readContent, "sha224sum": readContent, "sha256sum": readContent, "sha384sum": readContent,
		"sha512sum": readContent, "b2sum": readContent, "cksum": readContent, "base64": readContent,
		"base32": readContent, "strings": readContent, "hexdump": readContent, "rev": readContent,
		"column": readContent, "head": readContent, "tail": readContent, "wc": readContent, "sort": readContent,
		"file": readContent, "look": readLook, "numfmt": readNone, "tr": readNone, "seq": readNone,
		"uniq": readInOut, "xxd": readInOut,
		"ls": readMeta, "dir": readMeta, "vdir": readMeta, "du": readMeta, "df": readMetaOperands,
		"stat": readMetaOperands, "realpath": readMetaOperands, "readlink": readMetaOperands, "tree": readMeta,
		"basename": readNone, "dirname": readNone, "echo": readNone, "printf": readNone, "true": readNone,
		"false": readNone, ":": readNone, "sleep": readNone, "yes": readNone, "pwd": readNone,
		"whoami": readNone, "id": readNone, "uname": readNone, "nproc": readNone, "tty": readNone,
		"groups": readNone, "users": readNone, "who": readNone, "arch": readNone, "logname": readNone,
		"hostid": readNone, "locale": readNone, "getconf": readNone, "free": readNone, "uptime": readNone,
		"which": readNone, "type": readNone, "pgrep": readNone, "lsblk": readNone, "jobs": readNone,
		"wait": readNone, "dirs": readNone, "command": readNone, "exec": readNone, "times": readNone, "help": readNone,
		"printenv": readPrintenv, "env": readEnvDump, "date": readDate, "hostname": readHostname, "ps": readNone,
		"test": readNone, "[": readNone, "cd": readNone, "pushd": readNone, "popd": readNone,
		"grep": readGrep, "egrep": readGrep, "fgrep": readGrep, "rg": readRg, "fd": readFd, "fdfind": readFd,
		"find": readFind, "jq": readJq, "sed": readSed, "awk": readAwk, "gawk": readAwk, "mawk": readAwk,
		"nawk": readAwk,
	}
})

// TracksFiles reports whether the analysis reports every file the program
// reads or writes as a target (a modelled reader), so that a caller need
// not guess from its arguments.
func TracksFiles(prog string) bool {
	_, ok := readers()[baseName(prog)]
	return ok
}

// readMetaOperands: operands are paths whose metadata is read; none means
// none (stat without operands is an error, df shows every file system).
func readMetaOperands(c *classCtx) {
	for _, i := range c.p.Operands {
		c.meta(i)
	}
}

// readInOut: an input file and an output file (uniq IN OUT, xxd IN OUT).
func readInOut(c *classCtx) {
	for k, i := range c.p.Operands {
		switch {
		case c.args[i] == "-":
		case k == 0:
			c.read(i)
		default:
			c.write(i, OpWrite)
		}
	}
	if c.base == "xxd" && c.p.Has("-r") {
		c.info.writes = true
		c.notProven = true
	}
}

// readLook: look STRING [FILE].
func readLook(c *classCtx) {
	for k, i := range c.p.Operands {
		if k > 0 {
			c.read(i)
		}
	}
}

// readDiff: diff reads its operands, whole trees with -r.
func readDiff(c *classCtx) {
	rec := c.p.Has("--recursive")
	for _, i := range c.p.Operands {
		if c.args[i] != "-" {
			c.read(i).Recursive = rec
		}
	}
}

// readPrintenv: without operands printenv prints every variable; an
// operand naming a secret prints it.
func readPrintenv(c *classCtx) {
	if len(c.p.Operands) == 0 {
		c.info.secrets = append(c.info.secrets, "printenv prints the whole environment")
	}
	for _, i := range c.p.Operands {
		if c.dyn[i] || SecretName(c.args[i]) {
			c.info.secrets = append(c.info.secrets, "printenv "+c.args[i]+" prints a secret")
		}
	}
}

// readEnvDump: env without a command prints the whole environment.
func readEnvDump(c *classCtx) {
	c.info.secrets = append(c.info.secrets, "env prints the whole environment")
}

// readDate: `date +FORMAT` prints; any other operand sets the clock.
func readDate(c *classCtx) {
	for _, i := range c.p.Operands {
		if c.dyn[i] || !strings.HasPrefix(c.args[i], "+") {
			c.info.writes, c.notProven = true, true
		}
	}
}

// readHostname: an operand sets the host name.
func readHostname(c *classCtx) {
	if len(c.p.Operands) > 0 {
		c.info.writes, c.notProven = true, true
	}
}

// readGrep: the first operand is the pattern unless -e or -f gave one; the
// rest are files, whole trees with -r (the working directory when none).
func readGrep(c *classCtx) {
	ops := c.p.Operands
	if !c.p.Has("--regexp") && !c.p.Has("--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	rec := c.p.Has("--recursive") || c.p.Has("--dereference-recursive")
	for _, f := range c.p.Values("--directories") {
		rec = rec || strings.HasPrefix("recurse", f) && f != ""
	}
	for _, i := range ops {
		if c.args[i] != "-" {
			c.read(i).Recursive = rec
		}
	}
	if rec && len(ops) == 0 {
		c.target(".", false, OpRead).Recursive = true
	}
}

// readRg: like grep, always recursive; hidden files only with --hidden or
// -uu, but credential files need not be hidden (server.key).
func readRg(c *classCtx) {
	ops := c.p.Operands
	if !c.p.Has("--regexp") && !c.p.Has("--file") && !c.p.Has("--files") && !c.p.Has("--type-list") && len(ops) > 0 {
		ops = ops[1:]
	}
	unrestricted := 0
	for _, f := range c.p.Flags {
		if f.Name == "--unrestricted" {
			unrestricted++
		}
	}
	hidden := c.p.Has("--hidden") || unrestricted >= 2
	for _, i := range ops {
		if c.args[i] != "-" {
			t := c.read(i)
			t.Recursive, t.SkipsHidden = true, !hidden
		}
	}
	if len(ops) == 0 && !c.p.Has("--type-list") {
		t := c.target(".", false, OpRead)
		t.Recursive, t.SkipsHidden = true, !hidden
	}
}

// readFd: fd PATTERN [PATH...] lists names.
func readFd(c *classCtx) {
	ops := c.p.Operands
	if len(ops) > 0 {
		ops = ops[1:]
	}
	for _, i := range ops {
		c.meta(i).Recursive = true
	}
	for _, v := range c.p.Values("--search-path") {
		t := c.target(v, false, OpRead)
		t.Meta, t.Recursive = true, true
	}
	if len(ops) == 0 {
		t := c.target(".", false, OpRead)
		t.Meta, t.Recursive = true, true
	}
}

// readFind: the start points are listed, with everything below them; the
// -exec family runs commands, analysed as commands of their own.
func readFind(c *classCtx) {
	for _, i := range c.p.Operands {
		c.meta(i).Recursive = true
	}
	if len(c.p.Operands) == 0 {
		t := c.target(".", false, OpRead)
		t.Meta, t.Recursive = true, true
	}
	for _, f := range c.p.Flags {
		switch f.Name {
		case "-delete":
			for _, i := range c.p.Operands {
				c.target(c.args[i], c.dyn[i], OpDelete).Recursive = true
			}
			if len(c.p.Operands) == 0 {
				c.target(".", true, OpDelete)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			var sub argv
			for j := f.Index + 1; j < len(c.args) && !(!c.dyn[j] && (c.args[j] == ";" || c.args[j] == "+")); j++ {
				sub.words = append(sub.words, c.args[j])
				sub.dyn = append(sub.dyn, c.dyn[j] || strings.Contains(c.args[j], "{}"))
			}
			if len(sub.words) > 0 {
				c.info.execs = append(c.info.execs, sub)
			}
			if f.Name == "-execdir" || f.Name == "-okdir" {
				c.info.execCwdUnknown = true
			}
			c.notProven = true
		}
	}
}

// readJq: the first operand is the filter (a filter file with -f) unless
// --args or --jsonargs turn the rest into strings; the filter may read
// the environment ($ENV, env) or load modules.
func readJq(c *classCtx) {
	ops := c.p.Operands
	fromFile := c.p.Has("--from-file")
	if len(ops) > 0 {
		i := ops[0]
		ops = ops[1:]
		switch {
		case fromFile:
			c.read(i)
			c.unprovable("jq -f reads its filter from a file")
		case c.dyn[i]:
			c.notProven = true
		default:
			if why := jqFilterRisk(c.args[i]); why != "" {
				if strings.Contains(why, "environment") {
					c.info.secrets = append(c.info.secrets, "jq "+why)
				} else {
					c.notProven = true
				}
			}
		}
	}
	if c.p.Has("--args") || c.p.Has("--jsonargs") {
		return
	}
	for _, i := range ops {
		c.read(i)
	}
}

// jqFilterRisk says why a jq filter is not a pure transformation: it
// reads the environment or loads modules from files.
func jqFilterRisk(f string) string {
	switch {
	case strings.Contains(f, "$ENV") || containsWord(f, "env"):
		return "reads the environment"
	case containsWord(f, "import") || containsWord(f, "include") || strings.Contains(f, "input_filename") || strings.Contains(f, "$__loc__"):
		return "loads modules or names files"
	}
	return ""
}

// containsWord reports w in s as a whole identifier.
func containsWord(s, w string) bool {
	for k := 0; ; {
		j := strings.Index(s[k:], w)
		if j < 0 {
			return false
		}
		j += k
		before := j == 0 || !isIdentByte(s[j-1])
		after := j+len(w) >= len(s) || !isIdentByte(s[j+len(w)])
		if before && after {
			return true
		}
		k = j + 1
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// classifyModelled classifies a program that has a reader entry.
func classifyModelled(base string, args []string, dyn []bool, reader operandReader) classInfo {
	c := &classCtx{base: base, args: args, dyn: dyn, p: ParseArgs(base, args, dyn)}
	if base == "find" {
		// find's commands are analysed as commands of their own
		// (readFind), not refused as unseen code.
		for k, f := range c.p.Flags {
			if f.Effect == EffectExec {
				c.p.Flags[k].Effect = EffectNone
			}
		}
	}
	c.effects()
	reader(c)
	return c.finish()
}

// classifyWriter classifies a program that writes its operands (tee, rm,
// mkdir, touch, ...) through its model.
func classifyWriter(base string, args []string, dyn []bool, op Op, skip int) classInfo {
	c := &classCtx{base: base, args: args, dyn: dyn, p: ParseArgs(base, args, dyn)}
	c.effects()
	ops := c.p.Operands
	if skip > 0 && len(ops) >= skip {
		ops = ops[skip:]
	}
	for _, i := range ops {
		if !(base == "tee" && c.args[i] == "-") {
			c.write(i, op)
		}
	}
	if len(c.p.Unknown) > 0 || len(c.p.MaybeOptions) > 0 {
		// An option the model does not know may take the next word as
		// its value or name another file: say so rather than guess.
		c.target(strings.Join(c.p.Unknown, " ")+" ...", true, op)
	}
	c.info.writes = true
	c.info.readOnly = false
	return c.info
}

// SecretName reports an environment variable name that looks like it holds
// a credential.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	for _, s := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	return false
}

// KnownOptions reports whether a model parsed every argument of c, knew
// every option, and saw no word that may expand to an option other than
// a glob: the command means what the model says. A gate that cannot rely
// on an OS sandbox allows without asking only such commands.
func KnownOptions(c Command) bool {
	if c.DynamicName {
		return false
	}
	p := ParseArgs(c.Name, c.Args, c.Dynamic)
	if !p.Known() {
		return false
	}
	for _, i := range p.MaybeOptions {
		if !isGlobOnly(c.Args[i]) {
			return false
		}
	}
	return true
}
