package shell

import (
	"strings"
)

// classify returns what the program base does with args. Programs with a
// reader entry are read-only unless their options or operands say
// otherwise; every option must be known to their model. Programs kz knows
// to write are judged by what they write; everything else is neither
// read-only nor known to write, and is asked.
func classify(base string, args []string, dyn []bool) classInfo {
	if r, ok := readers()[base]; ok {
		return classifyModelled(base, args, dyn, r)
	}
	switch base {
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
		return classifyWriter(base, args, dyn, OpWrite, 0)
	case "touch", "mkdir", "truncate":
		return classifyWriter(base, args, dyn, OpWrite, 0)
	case "rm", "rmdir", "unlink", "shred":
		return classifyWriter(base, args, dyn, OpDelete, 0)
	case "chmod", "chown", "chgrp":
		skip := 1
		if ParseArgs(base, args, dyn).Has("--reference") {
			skip = 0
		}
		return classifyWriter(base, args, dyn, OpWrite, skip)
	case "cp", "mv", "install", "ln":
		return classifyCopy(base, args, dyn)
	case "dd":
		info := classInfo{writes: true}
		for i, a := range args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				info.targets = append(info.targets, Target{Path: v, Op: OpWrite, Dynamic: dyn[i]})
			}
			if v, ok := strings.CutPrefix(a, "if="); ok {
				info.targets = append(info.targets, Target{Path: v, Op: OpRead, Dynamic: dyn[i], Glob: dyn[i] && isGlobOnly(v)})
			}
		}
		return info
	case "curl", "wget":
		return classifyTransfer(base, args, dyn)
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
	case "source", ".":
		// The sourced file is read (and run): a credential sourced is
		// read.
		if len(args) > 0 {
			t := tgt(args, dyn, 0, OpRead)
			t.Glob = t.Dynamic && isGlobOnly(t.Path)
			return classInfo{targets: []Target{t}}
		}
	case "npm", "yarn", "pnpm", "npx", "bun", "make", "gmake", "cargo":
		// They run the project's scripts, recipes and build scripts.
		return classInfo{}
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
