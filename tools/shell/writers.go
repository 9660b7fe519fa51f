package shell

import (
	"slices"
	"strings"
)

// Programs that always write (downloaders, archivers) are never proven
// read-only, so their every option need not be known; what matters is
// every file they write or read, whatever the spelling of the option that
// names it. Their long options are matched the way their parsers do
// (wget's getopt_long and tar's argp take abbreviations), and an option
// that could be an abbreviation of a file option is taken for it.

// fileOpt is an option that names a file, or makes the program run code.
type fileOpt struct {
	short byte
	long  string
	op    Op
	// dir: the value is a directory written below; exec: the option
	// runs code or reads options from a file (unprovable).
	dir, exec bool
	// at: only a value starting with @ names a file (curl -d @f).
	at bool
}

// writerSpec describes such a program's options.
type writerSpec struct {
	// valued are the short options that take a value (a value ends a
	// cluster); longValued the long ones. longValued is a list rather
	// than a set so that the specs are static data: a map literal would
	// be built when the package initialises, in every kz process.
	valued     string
	longValued []string
	files      []fileOpt
}

var (
	curlSpec = writerSpec{valued: "ABCDEHKPQTUXYbcdeEFhmorstuwxyz", longValued: []string{
		"data", "data-binary", "data-raw", "data-ascii", "data-urlencode", "form", "form-string", "header", "user",
		"user-agent", "referer", "request", "proxy", "max-time", "connect-timeout", "retry", "url", "json", "cookie",
		"range", "resolve", "connect-to"},
		files: []fileOpt{{short: 'o', long: "output", op: OpWrite}, {short: 'D', long: "dump-header", op: OpWrite},
			{short: 'c', long: "cookie-jar", op: OpWrite}, {long: "trace", op: OpWrite}, {long: "trace-ascii", op: OpWrite},
			{long: "stderr", op: OpWrite}, {long: "etag-save", op: OpWrite}, {long: "libcurl", op: OpWrite},
			{long: "hsts", op: OpWrite}, {long: "alt-svc", op: OpWrite}, {long: "output-dir", op: OpWrite, dir: true},
			{short: 'K', long: "config", exec: true}, {short: 'T', long: "upload-file", op: OpRead},
			{short: 'E', long: "cert", op: OpRead}, {long: "key", op: OpRead}, {long: "cacert", op: OpRead},
			{short: 'b', long: "cookie", op: OpRead}, {long: "netrc-file", op: OpRead},
			{short: 'd', long: "data", op: OpRead, at: true}, {long: "data-binary", op: OpRead, at: true},
			{long: "data-urlencode", op: OpRead, at: true}, {long: "data-ascii", op: OpRead, at: true},
			{long: "json", op: OpRead, at: true}, {short: 'F', long: "form", op: OpRead, at: true},
			{short: 'H', long: "header", op: OpRead, at: true}}}
	wgetSpec = writerSpec{valued: "OoaPiDeUtTwQlAR", longValued: []string{"tries", "timeout",
		"user-agent", "header", "user", "password", "accept", "reject", "level", "wait", "quota", "domains", "limit-rate"},
		files: []fileOpt{{short: 'O', long: "output-document", op: OpWrite}, {short: 'o', long: "output-file", op: OpWrite},
			{short: 'a', long: "append-output", op: OpWrite}, {short: 'P', long: "directory-prefix", op: OpWrite, dir: true},
			{short: 'i', long: "input-file", op: OpRead}, {long: "load-cookies", op: OpRead},
			{long: "save-cookies", op: OpWrite}, {long: "post-file", op: OpRead}, {long: "body-file", op: OpRead},
			{long: "warc-file", op: OpWrite}, {long: "certificate", op: OpRead}, {long: "private-key", op: OpRead},
			{long: "config", exec: true}, {short: 'e', long: "execute", exec: true}, {long: "use-askpass", exec: true}}}
	tarSpec = writerSpec{valued: "fCTXIgbLFNHKV", longValued: []string{"format", "owner",
		"group", "mode", "mtime", "exclude", "transform", "strip-components", "blocking-factor", "label", "newer",
		"after-date", "newer-mtime", "record-size"},
		files: []fileOpt{{short: 'f', long: "file", op: OpWrite}, {short: 'C', long: "directory", op: OpWrite, dir: true},
			{short: 'T', long: "files-from", op: OpRead}, {short: 'X', long: "exclude-from", op: OpRead},
			{long: "to-command", exec: true}, {short: 'I', long: "use-compress-program", exec: true},
			{long: "rsh-command", exec: true}, {short: 'F', long: "info-script", exec: true},
			{long: "new-volume-script", exec: true}, {long: "checkpoint-action", exec: true},
			{long: "index-file", op: OpWrite}, {short: 'g', long: "listed-incremental", op: OpWrite},
			{long: "volno-file", op: OpWrite}}}
)

// lookup finds the file option a long name (possibly abbreviated) or a
// short letter stands for.
func (s writerSpec) lookup(long string, short byte) *fileOpt {
	for i := range s.files {
		o := &s.files[i]
		if short != 0 && o.short == short {
			return o
		}
		if long != "" && (o.long == long || len(long) >= 2 && strings.HasPrefix(o.long, long)) {
			return o
		}
	}
	return nil
}

// scanWriter returns the files the options name and why the command is
// unprovable, if it is; operands are the words that are not options.
func scanWriter(base string, spec writerSpec, args []string, dyn []bool) (tg []Target, operands []int, unprovable string) {
	add := func(o *fileOpt, v string, d bool) {
		switch {
		case o.exec:
			unprovable = base + " --" + o.long + " runs a program or reads options from a file"
		case o.at:
			// @file, and name@file or name=@file;type=... in
			// --data-urlencode and -F.
			f, ok := strings.CutPrefix(v, "@")
			if !ok && (o.long == "data-urlencode" || o.long == "form") {
				_, f, ok = strings.Cut(v, "@")
				f, _, _ = strings.Cut(f, ";")
			}
			if ok && f != "-" {
				tg = append(tg, Target{Path: f, Op: OpRead, Dynamic: d})
			}
		case v == "-" && o.op != "":
		default:
			tg = append(tg, Target{Path: v, Op: o.op, Dynamic: d, Recursive: o.dir})
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] && strings.HasPrefix(dynamicPrefix(a), "-") {
			unprovable = base + " with an option that is not a literal: " + a
			continue
		}
		if a == "--" {
			for j := i + 1; j < len(args); j++ {
				operands = append(operands, j)
			}
			break
		}
		if len(a) < 2 || a[0] != '-' || dyn[i] {
			operands = append(operands, i)
			continue
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			n, v, hasVal := strings.Cut(name, "=")
			o := spec.lookup(n, 0)
			takes := slices.Contains(spec.longValued, n) || o != nil && !hasVal
			if takes && !hasVal && i+1 < len(args) {
				i++
				v, hasVal = args[i], true
			}
			if o != nil && (hasVal || o.exec) {
				add(o, v, dyn[i])
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte(spec.valued, c) < 0 {
				continue
			}
			v, d := a[j+1:], dyn[i]
			if v == "" && i+1 < len(args) {
				i++
				v, d = args[i], dyn[i]
			}
			if o := spec.lookup("", c); o != nil {
				add(o, v, d)
			}
			break
		}
	}
	return tg, operands, unprovable
}

// classifyTransfer classifies curl and wget: what they write and read
// locally (an upload of a credential is a credential read).
func classifyTransfer(base string, args []string, dyn []bool) classInfo {
	spec := curlSpec
	if base == "wget" {
		spec = wgetSpec
	}
	tg, _, why := scanWriter(base, spec, args, dyn)
	info := classInfo{writes: true, targets: tg, unprovable: why}
	if base == "curl" {
		for _, a := range args {
			if a == "-O" || a == "--remote-name" || a == "--remote-name-all" || a == "-J" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "OJ") {
				// The file is named after the URL or by the server.
				info.targets = append(info.targets, Target{Path: "<file named by the server>", Op: OpWrite, Dynamic: true})
				break
			}
		}
	}
	return info
}

// classifyTar: creating writes the archive (-f) and reads what it packs;
// extracting writes whatever the archive names, which no check can see.
func classifyTar(args []string, dyn []bool) classInfo {
	tg, ops, why := scanWriter("tar", tarSpec, args, dyn)
	extract, create := false, false
	mode := func(s string) {
		extract = extract || strings.ContainsRune(s, 'x')
		create = create || strings.ContainsAny(s, "cru")
	}
	oldStyle := len(args) > 0 && !dyn[0] && !strings.HasPrefix(args[0], "-")
	for i, a := range args {
		switch {
		case dyn[i]:
		case i == 0 && oldStyle:
			// Old style: `tar xzf a.tar`, the keys' values follow.
			mode(a)
		case strings.HasPrefix(a, "--"):
			n, _, _ := strings.Cut(a[2:], "=")
			for long, m := range tarModes {
				if len(n) >= 2 && strings.HasPrefix(long, n) {
					mode(m)
				}
			}
		case strings.HasPrefix(a, "-"):
			k := strings.IndexAny(a[1:], tarSpec.valued)
			if k < 0 {
				k = len(a) - 1
			}
			mode(a[1 : 1+k])
		}
	}
	if oldStyle {
		ops = slicesWithout(ops, 0)
		if strings.ContainsRune(args[0], 'f') && len(args) > 1 {
			tg = append(tg, Target{Path: args[1], Op: OpWrite, Dynamic: dyn[1]})
			ops = slicesWithout(ops, 1)
		}
	}
	// tar is never proven read-only: its options are not all modelled.
	info := classInfo{writes: extract || create, unprovable: why}
	if extract {
		info.unprovable = "tar extracts the files its archive names"
	}
	for _, t := range tg {
		switch {
		case t.Path == "-":
		case t.Recursive:
			// -C: where it extracts, or where it packs from.
			if extract {
				info.targets = append(info.targets, Target{Path: t.Path, Op: OpWrite, Dynamic: t.Dynamic})
			}
		case t.Op == OpWrite && !create:
			// -f names the archive it reads when listing or extracting.
			info.targets = append(info.targets, Target{Path: t.Path, Op: OpRead, Dynamic: t.Dynamic})
		default:
			info.targets = append(info.targets, t)
		}
	}
	if create {
		for _, i := range ops {
			info.targets = append(info.targets, Target{Path: args[i], Op: OpRead, Dynamic: dyn[i], Recursive: true})
		}
	}
	return info
}

// tarModes are tar's operation modes by long name.
var tarModes = map[string]string{"extract": "x", "get": "x", "create": "c", "append": "r", "update": "u",
	"delete": "u", "concatenate": "r", "catenate": "r"}

// slicesWithout returns ops without the argument indexes given.
func slicesWithout(ops []int, drop ...int) []int {
	var out []int
	for _, o := range ops {
		keep := true
		for _, d := range drop {
			keep = keep && o != d
		}
		if keep {
			out = append(out, o)
		}
	}
	return out
}
