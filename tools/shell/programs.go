package shell

import (
	"strings"
)

// classInfo is what kz knows about one program run with given arguments.
type classInfo struct {
	readOnly   bool
	writes     bool
	targets    []Target
	execs      []argv
	unprovable string
}

type argv struct {
	words []string
	dyn   []bool
}

// readOnlyPrograms never write files nor run other programs, whatever
// their arguments (those with writing options are handled apart).
var readOnlyPrograms = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true,
	"echo": true, "printf": true, "pwd": true, "true": true, "false": true, "test": true, "[": true, "which": true,
	"whoami": true, "id": true, "uname": true, "file": true, "stat": true, "du": true, "df": true,
	"basename": true, "dirname": true, "realpath": true, "readlink": true, "diff": true, "cmp": true, "comm": true,
	"cut": true, "tr": true, "nl": true, "od": true, "hexdump": true, "tac": true, "rev": true, "fold": true,
	"expand": true, "unexpand": true, "seq": true, "sleep": true, "cd": true, "pushd": true, "popd": true,
	"type": true, "jq": true, "column": true, "sha256sum": true, "sha1sum": true, "sha512sum": true, "md5sum": true,
	"b2sum": true, "cksum": true, "base64": true, "base32": true, "strings": true, "ps": true, "printenv": true,
	"locale": true, "nproc": true, "uptime": true, "free": true, "getconf": true, "tty": true, "groups": true,
	"users": true, "who": true, "yes": true, ":": true, "dirs": true, "jobs": true, "exec": true, "env": true,
	"command": true, "ag": true, "paste": true, "join": true, "look": true, "numfmt": true, "arch": true,
	"lsblk": true, "pgrep": true, "wait": true, "shopt": false,
}

// classify returns what the program base does with args.
func classify(base string, args []string, dyn []bool) classInfo {
	switch base {
	case "date":
		return classInfo{readOnly: !anyArg(args, "-s", "--set")}
	case "hostname":
		return classInfo{readOnly: len(args) == 0 || allFlags(args)}
	case "uniq":
		ops := operands(args, dyn, "f s w", nil)
		if len(ops) >= 2 {
			return classInfo{writes: true, targets: []Target{tgt(args, dyn, ops[1], OpWrite)}}
		}
		return classInfo{readOnly: true}
	case "tree":
		var t []Target
		scanOpts(args, dyn, 0, optSpec{short: "oLPIH", long: map[string]bool{"filelimit": true, "timefmt": true, "charset": true}}, func(o, a string, d bool) {
			if o == "-o" {
				t = append(t, Target{Path: a, Op: OpWrite, Dynamic: d})
			}
		})
		return classInfo{readOnly: len(t) == 0, writes: len(t) > 0, targets: t}
	case "xxd":
		ops := operands(args, dyn, "c g l s o n", nil)
		if len(ops) >= 2 {
			return classInfo{writes: true, targets: []Target{tgt(args, dyn, ops[1], OpWrite)}}
		}
		return classInfo{readOnly: true}
	case "sort":
		return classifySort(args, dyn)
	case "sed":
		return classifySed(args, dyn)
	case "awk", "gawk", "mawk", "nawk":
		return classifyAwk(args, dyn)
	case "find":
		return classifyFind(args, dyn)
	case "rg":
		return classifyRg(args, dyn)
	case "fd", "fdfind":
		if anyArgPrefix(args, "-x", "-X", "--exec", "--exec-batch") {
			return classInfo{unprovable: "fd --exec runs commands"}
		}
		return classInfo{readOnly: true}
	case "git":
		return classifyGit(args, dyn)
	case "go":
		info := classifyGo(args)
		if len(args) > 0 && (args[0] == "build" || args[0] == "test" || args[0] == "run" || args[0] == "install") {
			out := classifyOutputFlag(args[1:], dyn[1:], "-o", false)
			info.targets = append(info.targets, out.targets...)
		}
		return info
	case "tee":
		return writesOperands(args, dyn, "", nil, OpWrite)
	case "touch":
		return writesOperands(args, dyn, "dtr", map[string]bool{"date": true, "reference": true}, OpWrite)
	case "mkdir":
		return writesOperands(args, dyn, "m", map[string]bool{"mode": true, "context": true}, OpWrite)
	case "rm", "rmdir", "unlink":
		return writesOperands(args, dyn, "", nil, OpDelete)
	case "shred":
		return writesOperands(args, dyn, "ns", map[string]bool{"iterations": true, "size": true, "random-source": true}, OpDelete)
	case "truncate":
		return writesOperands(args, dyn, "sr", map[string]bool{"size": true, "reference": true}, OpWrite)
	case "chmod", "chown", "chgrp":
		info := writesOperands(args, dyn, "", map[string]bool{"reference": false}, OpWrite)
		if !anyArgPrefix(args, "--reference") && len(info.targets) > 0 {
			info.targets = info.targets[1:] // the mode or owner
		}
		return info
	case "cp", "mv", "install", "ln":
		return classifyCopy(base, args, dyn)
	case "dd":
		info := classInfo{writes: true}
		for i, a := range args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				info.targets = append(info.targets, Target{Path: v, Op: OpWrite, Dynamic: dyn[i]})
			}
		}
		return info
	case "curl", "wget":
		var t []Target
		scanOpts(args, dyn, 0, optSpec{short: "oOdHXuAeEKbcTwxmrCFPDY", long: map[string]bool{"output": true, "output-document": true, "data": true, "header": true, "config": true, "upload-file": true, "dump-header": true, "cookie-jar": true, "directory-prefix": true}}, func(o, a string, d bool) {
			switch {
			case base == "curl" && (o == "-o" || o == "--output" || o == "-D" || o == "--dump-header" || o == "-c" || o == "--cookie-jar"),
				base == "wget" && (o == "-O" || o == "--output-document"):
				t = append(t, Target{Path: a, Op: OpWrite, Dynamic: d})
			case base == "wget" && (o == "-P" || o == "--directory-prefix"):
				t = append(t, Target{Path: a, Op: OpWrite, Dynamic: true})
			}
		})
		return classInfo{writes: len(t) > 0 || base == "wget", targets: t}
	case "patch":
		var t []Target
		scanOpts(args, dyn, 0, optSpec{short: "oBdDFgiprVYzx", long: map[string]bool{"output": true, "directory": true, "input": true, "reject-file": true, "prefix": true, "strip": true, "basename-prefix": true, "backup-if-mismatch": false, "suffix": true}}, func(o, a string, d bool) {
			if o == "-o" || o == "--output" || o == "-r" || o == "--reject-file" {
				t = append(t, Target{Path: a, Op: OpWrite, Dynamic: d})
			}
		})
		if len(t) == 0 {
			return classInfo{writes: true, unprovable: "patch writes the files its diff names"}
		}
		return classInfo{writes: true, targets: t}
	case "tar", "bsdtar":
		return classifyTar(args, dyn)
	case "unzip", "7z", "7za", "cpio", "ar", "bunzip2", "unxz":
		return classInfo{writes: true, unprovable: base + " writes the files its archive names"}
	case "rsync", "scp":
		ops := operands(args, dyn, "eTfB", map[string]bool{"rsh": true, "temp-dir": true, "filter": true, "exclude": true, "include": true, "rsync-path": true, "backup-dir": true, "chmod": true, "log-file": true, "partial-dir": true})
		if len(ops) == 0 {
			return classInfo{writes: true}
		}
		d := ops[len(ops)-1]
		return classInfo{writes: true, targets: []Target{tgt(args, dyn, d, OpWrite)}}
	case "gunzip", "gzip", "bzip2", "xz", "zip", "zstd", "sftp", "ftp":
		return classInfo{writes: true}
	case "perl", "ruby":
		if info, ok := classifyInPlace(args, dyn); ok {
			return info
		}
	case "gcc", "cc", "g++", "c++", "clang", "clang++", "rustc", "tcc", "ld", "as":
		return classifyOutputFlag(args, dyn, "-o", true)
	}
	if readOnlyPrograms[base] {
		return classInfo{readOnly: true}
	}
	return classInfo{}
}

func tgt(args []string, dyn []bool, i int, op Op) Target {
	return Target{Path: args[i], Op: op, Dynamic: dyn[i]}
}

func anyArg(args []string, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if a == o {
				return true
			}
		}
	}
	return false
}

func anyArgPrefix(args []string, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if strings.HasPrefix(a, o) {
				return true
			}
		}
	}
	return false
}

func allFlags(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// operands returns the indexes of the non-option arguments. Short options
// listed in short (letters, spaces ignored) and long ones in long take an
// argument. Options after operands are recognised, as GNU tools do.
func operands(args []string, dyn []bool, short string, long map[string]bool) []int {
	var ops []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] || a == "-" || !strings.HasPrefix(a, "-") {
			ops = append(ops, i)
			continue
		}
		if a == "--" {
			for j := i + 1; j < len(args); j++ {
				ops = append(ops, j)
			}
			break
		}
		if strings.HasPrefix(a, "--") {
			name, _, hasVal := strings.Cut(a[2:], "=")
			if !hasVal && long[name] {
				i++
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			if strings.IndexByte(short, a[j]) >= 0 && a[j] != ' ' {
				if j == len(a)-1 {
					i++
				}
				break
			}
		}
	}
	return ops
}

func writesOperands(args []string, dyn []bool, short string, long map[string]bool, op Op) classInfo {
	info := classInfo{writes: true}
	for _, i := range operands(args, dyn, short, long) {
		info.targets = append(info.targets, tgt(args, dyn, i, op))
	}
	return info
}

func classifySort(args []string, dyn []bool) classInfo {
	info := classInfo{readOnly: true}
	scanOpts(args, dyn, 0, optSpec{short: "kotST", long: map[string]bool{"key": true, "output": true, "field-separator": true, "buffer-size": true, "temporary-directory": true, "compress-program": true, "files0-from": true, "parallel": true, "batch-size": true, "sort": true, "random-source": true}}, func(o, a string, d bool) {
		switch o {
		case "-o", "--output":
			info.readOnly, info.writes = false, true
			info.targets = append(info.targets, Target{Path: a, Op: OpWrite, Dynamic: d})
		case "--compress-program":
			info.readOnly = false
			info.unprovable = "sort --compress-program runs a program"
		}
	})
	// Options may follow operands.
	for i, a := range args {
		if strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "-o") && i > 0 && !strings.HasPrefix(args[i-1], "-") {
			info.readOnly = false
		}
	}
	return info
}

func classifyRg(args []string, dyn []bool) classInfo {
	info := classInfo{readOnly: true}
	for i, a := range args {
		if a == "--pre" || strings.HasPrefix(a, "--pre=") {
			info.readOnly = false
			prog, d := strings.TrimPrefix(a, "--pre="), false
			if a == "--pre" && i+1 < len(args) {
				prog, d = args[i+1], dyn[i+1]
			}
			info.execs = append(info.execs, argv{words: []string{prog}, dyn: []bool{d}})
		}
	}
	return info
}

func classifyGo(args []string) classInfo {
	if len(args) == 0 {
		return classInfo{readOnly: true}
	}
	switch args[0] {
	case "version", "doc", "help":
		return classInfo{readOnly: true}
	case "env":
		return classInfo{readOnly: !anyArg(args, "-w", "-u")}
	}
	return classInfo{}
}

// classifyFind: find is read-only unless it deletes, executes or writes
// listing files. -exec commands are analysed as commands of their own.
func classifyFind(args []string, dyn []bool) classInfo {
	info := classInfo{readOnly: true}
	var starts []int
	i := 0
	for i < len(args) && (args[i] == "-H" || args[i] == "-L" || args[i] == "-P" || strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !dyn[i] && (strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")") {
			break
		}
		starts = append(starts, i)
	}
	for ; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-delete":
			info.readOnly, info.writes = false, true
			if len(starts) == 0 {
				info.targets = append(info.targets, Target{Path: ".", Op: OpDelete, Dynamic: true})
			}
			for _, s := range starts {
				info.targets = append(info.targets, tgt(args, dyn, s, OpDelete))
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			info.readOnly = false
			j := i + 1
			var sub argv
			for j < len(args) && !(args[j] == ";" || args[j] == "+") {
				sub.words = append(sub.words, args[j])
				sub.dyn = append(sub.dyn, dyn[j] || strings.Contains(args[j], "{}"))
				j++
			}
			if len(sub.words) > 0 {
				info.execs = append(info.execs, sub)
			}
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			info.readOnly, info.writes = false, true
			if i+1 < len(args) {
				info.targets = append(info.targets, tgt(args, dyn, i+1, OpWrite))
				i++
			}
		}
	}
	return info
}

// classifyAwk: an awk program is read-only only if it cannot run commands
// or write files: no system(), no pipes, no output redirection.
func classifyAwk(args []string, dyn []bool) classInfo {
	prog, progDyn, fromFile := "", false, false
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		switch {
		case a == "-f" || a == "--file" || a == "-i" || a == "--include" || a == "-l" || a == "--load" || a == "-E" || a == "--exec":
			fromFile = true
			i += 2
			continue
		case a == "-v" || a == "-F" || a == "--assign" || a == "--field-separator":
			i += 2
			continue
		case strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "-E"):
			fromFile = true
		}
		i++
	}
	if fromFile {
		return classInfo{unprovable: "awk program comes from a file"}
	}
	if i < len(args) {
		prog, progDyn = args[i], dyn[i]
	}
	if progDyn || strings.Contains(prog, "system") || strings.ContainsAny(prog, "|>@") {
		// Output redirection and pipes inside the program name files and
		// commands no check can see.
		return classInfo{unprovable: "awk program may write files or run commands"}
	}
	return classInfo{readOnly: true}
}

// classifySed: `sed -i` writes its file operands; a script with w, W or e
// (as commands or s/// flags) writes or executes even without -i.
func classifySed(args []string, dyn []bool) classInfo {
	inPlace, scriptGiven, safe := false, false, true
	var ops []int
	i := 0
	for i < len(args) {
		a := args[i]
		if dyn[i] {
			ops = append(ops, i)
			i++
			continue
		}
		if a == "--" {
			for j := i + 1; j < len(args); j++ {
				ops = append(ops, j)
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			ops = append(ops, i)
			i++
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			switch name {
			case "in-place":
				inPlace = true
			case "expression":
				scriptGiven = true
				if !hasVal && i+1 < len(args) {
					i++
					val = args[i]
					if dyn[i] {
						safe = false
					}
				}
				safe = safe && sedScriptSafe(val)
			case "file":
				scriptGiven, safe = true, false
				if !hasVal {
					i++
				}
			case "line-length":
				if !hasVal {
					i++
				}
			}
			i++
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if c == 'i' {
				inPlace = true
				break // the rest is the backup suffix
			}
			if c == 'e' || c == 'f' || c == 'l' {
				val := a[j+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i]
					if dyn[i] {
						safe = false
					}
				}
				switch c {
				case 'e':
					scriptGiven = true
					safe = safe && sedScriptSafe(val)
				case 'f':
					scriptGiven, safe = true, false
				}
				break
			}
		}
		i++
	}
	files := ops
	if !scriptGiven && len(ops) > 0 {
		if dyn[ops[0]] {
			safe = false
		} else {
			safe = safe && sedScriptSafe(args[ops[0]])
		}
		files = ops[1:]
	}
	info := classInfo{readOnly: safe && !inPlace}
	if !safe {
		// w, W and e name their files and commands inside the script:
		// neither safety checks nor rules can see them.
		info.writes = true
		info.unprovable = "sed script writes files or runs commands (w, W, e) or comes from a file"
	}
	if inPlace {
		info.writes = true
		for _, k := range files {
			info.targets = append(info.targets, tgt(args, dyn, k, OpWrite))
		}
	}
	return info
}

// sedScriptSafe parses a sed script far enough to find commands that write
// (w, W, s///w) or execute (e, s///e). Anything it does not understand is
// unsafe.
func sedScriptSafe(s string) bool {
	i := 0
	skipTo := func(stop string) {
		for i < len(s) && strings.IndexByte(stop, s[i]) < 0 {
			i++
		}
	}
	delimited := func(d byte) bool {
		for i < len(s) {
			c := s[i]
			if c == '\\' {
				i += 2
				continue
			}
			i++
			if c == d {
				return true
			}
		}
		return false
	}
	for i < len(s) {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return true
		}
		// Address: numbers, $, /re/, \cREc, ranges, steps, negation.
		for i < len(s) {
			c := s[i]
			switch {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '!' || c == '+' || c == ' ':
				i++
				continue
			case c == '/':
				i++
				if !delimited('/') {
					return false
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			case c == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if !delimited(d) {
					return false
				}
				continue
			}
			break
		}
		if i >= len(s) {
			return false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
		case 's':
			if i >= len(s) {
				return false
			}
			d := s[i]
			i++
			// delimited consumes up to the next delimiter: once for the
			// pattern, once more for the replacement.
			if !delimited(d) {
				return false
			}
			if !delimited(d) {
				return false
			}
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				f := s[i]
				if f == 'w' || f == 'W' || f == 'e' {
					return false
				}
				if !(f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9' || f == ' ') {
					return false
				}
				i++
			}
		case 'y':
			if i >= len(s) {
				return false
			}
			d := s[i]
			i++
			// delimited consumes up to the next delimiter: once for the
			// pattern, once more for the replacement.
			if !delimited(d) {
				return false
			}
			if !delimited(d) {
				return false
			}
		case 'r', 'R', 'a', 'i', 'c':
			// A file name or text runs to the end of the line.
			skipTo("\n")
		case 'b', 't', 'T', ':':
			// A label ends at ';' in GNU sed: stopping there too means a
			// command after it is still checked.
			skipTo(";\n")
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'l', '=', 'q', 'Q', 'z', 'F':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		default:
			// w, W, e and anything unknown.
			return false
		}
	}
	return true
}

// classifyTar: creating writes the archive (-f); extracting writes whatever
// the archive names, which no check can see.
func classifyTar(args []string, dyn []bool) classInfo {
	extract, create := false, false
	var file, dir *Target
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-x" || a == "--extract" || a == "--get" || i == 0 && !strings.HasPrefix(a, "-") && strings.ContainsRune(a, 'x'):
			extract = true
		case a == "-c" || a == "--create" || a == "-r" || a == "-u" || a == "--append" || i == 0 && !strings.HasPrefix(a, "-") && strings.ContainsAny(a, "cru"):
			create = true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2:
			extract = extract || strings.ContainsRune(a, 'x')
			create = create || strings.ContainsAny(a, "cru")
		}
		if a == "-C" || a == "--directory" {
			if i+1 < len(args) {
				dir = &Target{Path: args[i+1], Op: OpWrite, Dynamic: dyn[i+1]}
			}
		}
		if v, ok := strings.CutPrefix(a, "--directory="); ok {
			dir = &Target{Path: v, Op: OpWrite, Dynamic: dyn[i]}
		}
		if v, ok := strings.CutPrefix(a, "--file="); ok {
			file = &Target{Path: v, Op: OpWrite, Dynamic: dyn[i]}
		}
		if a == "-f" || a == "--file" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "f") {
			if i+1 < len(args) {
				file = &Target{Path: args[i+1], Op: OpWrite, Dynamic: dyn[i+1]}
			}
		}
	}
	info := classInfo{writes: extract || create, readOnly: !extract && !create}
	if extract {
		info.unprovable = "tar extracts the files its archive names"
		if dir != nil {
			info.targets = append(info.targets, *dir)
		}
	}
	if create && file != nil && file.Path != "-" {
		info.targets = append(info.targets, *file)
	}
	return info
}
