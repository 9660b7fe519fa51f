package shell

import (
	"path"
	"strings"
)

// classifyCopy finds what cp, mv, install and ln write: the destination
// (and, for a directory destination, the file named after each source in
// it); mv also removes its sources. Options are read through the models,
// so `cp --tar=.git/hooks x` is `cp -t .git/hooks x`.
func classifyCopy(base string, args []string, dyn []bool) classInfo {
	info := classInfo{writes: true}
	p := ParseArgs(base, args, dyn)
	if len(p.Unknown) > 0 || len(p.MaybeOptions) > 0 {
		// An unknown option may take the next word as its value: the
		// destination cannot be told apart from the sources.
		info.unprovable = base + " with an option kz does not know or a word that may be one: " + strings.Join(p.Unknown, " ")
	}
	targetDir, targetDirDyn, hasTarget := "", false, false
	for _, f := range p.Flags {
		if f.Name == "--target-directory" {
			targetDir, targetDirDyn, hasTarget = f.Value, f.ValueDynamic, true
		}
	}
	ops := p.Operands
	if base == "install" && p.Has("--directory") {
		for _, k := range ops {
			info.targets = append(info.targets, tgt(args, dyn, k, OpWrite))
		}
		return info
	}
	sources := ops
	// linkDirs are the directories the new links may land in, for the
	// link targets below.
	var linkDirs []string
	if !hasTarget {
		if len(ops) == 0 {
			return info
		}
		if len(ops) == 1 && base == "ln" {
			// ln TARGET creates a link named after it in the cwd.
			info.targets = append(info.targets, Target{Path: path.Base(args[ops[0]]), Op: OpWrite, Dynamic: dyn[ops[0]]})
			info.targets = append(info.targets, linkTargets(p, args, dyn, ops, []string{"."})...)
			return info
		}
		dest := ops[len(ops)-1]
		sources = ops[:len(ops)-1]
		targetDir, targetDirDyn = args[dest], dyn[dest]
		info.targets = append(info.targets, Target{Path: targetDir, Op: OpWrite, Dynamic: targetDirDyn})
		// DEST is the link itself, or a directory the link goes into.
		linkDirs = []string{path.Dir(targetDir), targetDir}
	} else {
		info.targets = append(info.targets, Target{Path: targetDir, Op: OpWrite, Dynamic: targetDirDyn})
		linkDirs = []string{targetDir}
	}
	if base == "ln" || base == "cp" && (p.Has("--symbolic-link") || p.Has("--link")) {
		info.targets = append(info.targets, linkTargets(p, args, dyn, sources, linkDirs)...)
	}
	for _, s := range sources {
		info.targets = append(info.targets, Target{Path: strings.TrimSuffix(targetDir, "/") + "/" + path.Base(args[s]), Op: OpWrite, Dynamic: targetDirDyn || dyn[s]})
		switch base {
		case "mv":
			info.targets = append(info.targets, tgt(args, dyn, s, OpDelete))
		case "cp", "install":
			// What is copied is read: a credential or a file outside
			// copied into the workspace is read there.
			t := tgt(args, dyn, s, OpRead)
			t.Glob = t.Dynamic && isGlobOnly(t.Path)
			info.targets = append(info.targets, t)
		}
	}
	return info
}

// linkTargets returns what the links made from sources point to, as write
// targets: a link makes what it points to writable through it, so
// `ln -s .git/hooks h && echo x > h/pre-commit` writes into .git and
// `ln -s /etc e` opens /etc. A relative symbolic link is resolved from
// the directory it is created in, so each source is joined with every
// candidate link directory; a hard link, or `ln -r`, names its source from
// the cwd. Judging a candidate that is not the real one only asks more.
func linkTargets(p Parsed, args []string, dyn []bool, sources []int, linkDirs []string) []Target {
	symbolic := p.Has("--symbolic") || p.Has("--symbolic-link")
	relative := p.Has("--relative")
	if !symbolic || relative {
		linkDirs = []string{"."}
	}
	var out []Target
	seen := map[string]bool{}
	add := func(t Target) {
		if !seen[t.Path] {
			seen[t.Path] = true
			out = append(out, t)
		}
	}
	for _, s := range sources {
		src := args[s]
		if dyn[s] || isAbsPath(src) {
			add(Target{Path: src, Op: OpWrite, Dynamic: dyn[s]})
			continue
		}
		for _, d := range linkDirs {
			if d == "." || d == "" {
				add(Target{Path: src, Op: OpWrite})
			} else {
				add(Target{Path: strings.TrimSuffix(d, "/") + "/" + src, Op: OpWrite})
			}
		}
	}
	return out
}

// classifyInPlace finds the files `perl -i` and `ruby -i` edit in place:
// every operand after the script (with -e) is rewritten, like sed -i. ok is
// false when there is no -i.
func classifyInPlace(args []string, dyn []bool) (classInfo, bool) {
	inPlace, script := false, false
	var ops []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] && strings.HasPrefix(a, "-") {
			return classInfo{writes: true, unprovable: "an interpreter option is not a literal"}, true
		}
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				ops = append(ops, j)
			}
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 'i' {
					inPlace = true
					break // the rest of the word is the backup suffix
				}
				if c == 'e' || c == 'E' {
					script = true
					if j == len(a)-1 {
						i++ // the code is the next word
					}
					break
				}
				if strings.IndexByte("IMmlx0C", c) >= 0 {
					break // the rest of the word is the option's value
				}
			}
		default:
			ops = append(ops, i)
		}
	}
	if !inPlace {
		return classInfo{}, false
	}
	if !script && len(ops) > 0 {
		ops = ops[1:] // the first operand is the script file
	}
	info := classInfo{writes: true}
	for _, k := range ops {
		info.targets = append(info.targets, tgt(args, dyn, k, OpWrite))
	}
	return info, true
}

// classifyOutputFlag finds the file a compiler or `go build` writes with
// flag (`-o out`, `-o=out`, and `-oout` when attached is set: go has
// other flags starting with -o, compilers do not). Without the flag the
// output lands in the cwd, which stays a plain write.
func classifyOutputFlag(args []string, dyn []bool, flag string, attached bool) classInfo {
	info := classInfo{writes: true}
	for i, a := range args {
		switch {
		case a == flag && i+1 < len(args):
			info.targets = append(info.targets, tgt(args, dyn, i+1, OpWrite))
		case strings.HasPrefix(a, flag+"="):
			info.targets = append(info.targets, Target{Path: a[len(flag)+1:], Op: OpWrite, Dynamic: dyn[i]})
		case attached && strings.HasPrefix(a, flag) && len(a) > len(flag):
			info.targets = append(info.targets, Target{Path: a[len(flag):], Op: OpWrite, Dynamic: dyn[i]})
		}
	}
	return info
}
