package shell

import "strings"

// Models of the search and text-processing programs: grep, sed, awk, rg,
// fd, jq, tree, xxd. Option lists come from each tool's --help and manual
// (GNU grep 3.8 and sed 4.9 manuals, gawk's and mawk's manuals, ripgrep's
// and fd's flag definitions, jq 1.7's manual, tree 2.x's man page, vim's
// xxd man page).

func initSearchModels() {
	grep := gnu("grep", "E,extended-regexp", "F,fixed-strings", "G,basic-regexp", "P,perl-regexp",
		"e,regexp=", "f,file=:r", "i,ignore-case", "y@ignore-case", "no-ignore-case", "w,word-regexp",
		"x,line-regexp", "z,null-data", "s,no-messages", "v,invert-match", "V@version", "m,max-count=",
		"b,byte-offset", "n,line-number", "line-buffered", "H,with-filename", "h,no-filename", "label=",
		"o,only-matching", "q,quiet,silent", "binary-files=", "a,text", "I", "d,directories=", "D,devices=",
		"r,recursive", "R,dereference-recursive", "include=", "exclude=", "exclude-from=:r", "exclude-dir=",
		"L,files-without-match", "l,files-with-matches", "c,count", "T,initial-tab", "Z,null",
		"B,before-context=", "A,after-context=", "C,context=", "group-separator=", "no-group-separator",
		"color,colour?", "U,binary", "u,unix-byte-offsets")
	grep.numeric = "--context"
	register(grep, "egrep", "fgrep")

	register(gnu("sed", "n,quiet,silent", "debug", "e,expression=", "f,file=:r", "follow-symlinks",
		"i,in-place?:W", "l,line-length=", "posix", "E,r,regexp-extended", "s,separate", "sandbox",
		"u,unbuffered", "z,null-data", "b,binary"))

	// gawk: its -W form takes any long option name, which is why it is
	// an exec effect here (-W exec=, -W source=, -W load=...).
	register(gnu("gawk", "f,file=:r", "F,field-separator=", "v,assign=", "b,characters-as-bytes",
		"c,traditional", "C,copyright", "d@dump-variables:w", "dump-variables?:w", "D@debug:x", "debug?:x",
		"e,source=", "E,exec=:x", "g,gen-pot", "h@help", "i,include=:x", "I,trace", "k,csv",
		"l,load=:x", "L@lint", "lint?", "M,bignum", "N,use-lc-numeric", "n,non-decimal-data",
		"o@pretty-print:w", "pretty-print?:w", "O,optimize", "p@profile:w", "profile?:w", "P,posix",
		"r,re-interval", "s,no-optimize", "S,sandbox", "t,lint-old", "V@version", "W=:x", "usage"))
	// mawk's options are -f, -F, -v, -W (abbreviable words) and --.
	register(newModel("mawk", false, "f=:r", "F=", "v=", "W=:x"))
	// `awk` is gawk or mawk (or busybox, or the one true awk): the
	// union with the strictest reading of each option.
	register(gnu("awk", "f,file=:r", "F,field-separator=", "v,assign=", "b,characters-as-bytes",
		"c,traditional", "C,copyright", "d@dump-variables:w", "dump-variables?:w", "D@debug:x", "debug?:x",
		"e,source=", "E,exec=:x", "g,gen-pot", "h@help", "i,include=:x", "I,trace", "k,csv",
		"l,load=:x", "L@lint", "lint?", "M,bignum", "N,use-lc-numeric", "n,non-decimal-data",
		"o@pretty-print:w", "pretty-print?:w", "O,optimize", "p@profile:w", "profile?:w", "P,posix",
		"r,re-interval", "s,no-optimize", "S,sandbox", "t,lint-old", "V@version", "W=:x", "usage"), "nawk")

	// ripgrep parses with lexopt: no abbreviations, options anywhere.
	rg := gnu("rg", "h@help", "V@version", "pcre2-version", "line-buffered", "no-line-buffered",
		"block-buffered", "no-block-buffered", "i,ignore-case", "s,case-sensitive", "S,smart-case",
		"A,after-context=", "B,before-context=", "C,context=", "column", "no-column", "c,count",
		"count-matches", "include-zero", "no-include-zero", "E,encoding=", "no-encoding", "engine=",
		"f,file=:r", "l,files-with-matches", "files-without-match", "H,with-filename", "I,no-filename",
		"one-file-system", "no-one-file-system", "F,fixed-strings", "no-fixed-strings", "L,follow",
		"no-follow", "generate=", "g,glob=", "iglob=", "glob-case-insensitive", "no-glob-case-insensitive",
		"heading", "no-heading", ".,hidden", "no-hidden", "auto-hybrid-regex", "no-auto-hybrid-regex",
		"no-ignore", "ignore", "ignore-file-case-insensitive", "no-ignore-file-case-insensitive",
		"no-ignore-exclude", "ignore-exclude", "no-ignore-global", "ignore-global", "no-ignore-parent",
		"ignore-parent", "no-ignore-vcs", "ignore-vcs", "no-require-git", "require-git", "no-ignore-dot",
		"ignore-dot", "no-ignore-files", "ignore-files", "json", "no-json", "n,line-number",
		"N,no-line-number", "crlf", "no-crlf", "null-data", "max-columns-preview", "no-max-columns-preview",
		"d,max-depth,maxdepth=", "no-messages", "messages", "no-ignore-messages", "ignore-messages", "mmap",
		"no-mmap", "U,multiline", "no-multiline", "multiline-dotall", "no-multiline-dotall",
		"o,only-matching", "passthru,passthrough", "P,pcre2", "no-pcre2", "pcre2-unicode", "no-pcre2-unicode",
		"pre=:x", "no-pre", "pre-glob=", "p,pretty", "vimgrep", "e,regexp=", "r,replace=", "sort=", "sortr=",
		"sort-files", "no-sort-files", "stats", "no-stats", "a,text", "binary", "no-binary", "no-text",
		"j,threads=", "trim", "no-trim", "t,type=", "type-add=", "type-clear=", "type-list", "T,type-not=",
		"w,word-regexp", "x,line-regexp", "unicode", "no-unicode", "z,search-zip:x", "no-search-zip",
		"b,byte-offset", "no-byte-offset", "color=", "colors=", "context-separator=",
		"no-context-separator", "debug", "field-context-separator=", "field-match-separator=",
		"hostname-bin=:x", "hyperlink-format=", "trace", "dfa-size-limit=", "files", "ignore-file=:C",
		"v,invert-match", "no-invert-match", "M,max-columns=", "m,max-count=", "max-bytes=",
		"max-filesize=", "no-config", "0,null", "path-separator=", "q,quiet", "regex-size-limit=",
		"u,unrestricted", "stop-on-nonmatch")
	rg.exactLong = true
	register(rg)

	// fd parses with clap: no abbreviations, options anywhere; -x/-X
	// take the rest of the words up to ";".
	fd := gnu("fd", "H,hidden", "no-hidden", "I,no-ignore", "ignore", "no-ignore-vcs", "ignore-vcs",
		"no-require-git", "require-git", "no-ignore-parent", "ignore-parent", "no-global-ignore-file",
		"u,unrestricted", "s,case-sensitive", "i,ignore-case", "g,glob", "regex", "F,fixed-strings,literal",
		"exact", "and=", "a,absolute-path", "relative-path", "l,list-details:x", "L,follow,dereference",
		"no-follow", "p,full-path", "0,print0", "d,max-depth,maxdepth=", "min-depth,mindepth=",
		"exact-depth=", "E,exclude=", "prune", "t,type=", "e,extension=", "S,size=",
		"changed-within,change-newer-than,newer,changed-after=", "changed-before,change-older-than,older=",
		"o,owner=", "format=", "x,exec=:x", "X,exec-batch=:x", "batch-size=", "ignore-file=:C", "c,color=",
		"hyperlink,hyper?", "ignore-contain=", "j,threads=", "max-buffer-time=", "max-results=", "1",
		"q,quiet,has-results", "show-errors", "error-on-fs-errors", "C,base-directory=:c", "path-separator=",
		"search-path=", "strip-cwd-prefix?", "one-file-system,mount,xdev", "gen-completions?", "h@help",
		"V@version")
	fd.exactLong = true
	register(fd, "fdfind")

	register(&Model{name: "jq", custom: parseJq})
	register(&Model{name: "xxd", custom: parseXxd})
	register(&Model{name: "tree", custom: parseTree})
}

// parseJq follows jq 1.7's own argument loop: exact long options, grouped
// short flags, `--arg NAME VALUE` and friends taking two words, and -f
// making the first operand the filter file rather than the filter.
func parseJq(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	short := map[byte]string{'c': "--compact-output", 'n': "--null-input", 'e': "--exit-status",
		's': "--slurp", 'r': "--raw-output", 'R': "--raw-input", 'C': "--color-output",
		'M': "--monochrome-output", 'S': "--sort-keys", 'a': "--ascii-output", 'j': "--join-output",
		'h': "--help", 'V': "--version", 'f': "--from-file", 'L': "--library-path"}
	long := map[string]int{"compact-output": 0, "null-input": 0, "exit-status": 0, "slurp": 0, "raw-output": 0,
		"raw-output0": 0, "raw-input": 0, "color-output": 0, "monochrome-output": 0, "sort-keys": 0,
		"ascii-output": 0, "join-output": 0, "help": 0, "version": 0, "from-file": 0, "library-path": 1,
		"tab": 0, "indent": 1, "seq": 0, "stream": 0, "stream-errors": 0, "unbuffered": 0, "args": 0,
		"jsonargs": 0, "arg": 2, "argjson": 2, "slurpfile": 2, "rawfile": 2, "argfile": 2,
		"build-configuration": 0, "debug-dump-disasm": 0, "debug-trace": 0, "debug-trace=all": 0}
	effects := map[string]Effect{"slurpfile": EffectRead, "rawfile": EffectRead, "argfile": EffectRead,
		"library-path": EffectConfig}
	rest := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] && !rest && dynamicPrefix(a) == "" {
			p.MaybeOptions = append(p.MaybeOptions, i)
		}
		if rest || len(a) < 2 || a[0] != '-' || dyn[i] && len(dynamicPrefix(a)) < 2 {
			p.Operands = append(p.Operands, i)
			continue
		}
		if a == "--" {
			rest = true
			continue
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			n, known := long[name]
			if !known || dyn[i] {
				p.Unknown = append(p.Unknown, a)
				continue
			}
			f := Flag{Name: "--" + name, Index: i, Effect: effects[name]}
			if n > 0 && i+n < len(args) {
				// For the two-word options the file is the second.
				f.Value, f.HasValue, f.ValueDynamic = args[i+n], true, dyn[i+n]
				if n == 2 && effects[name] == "" {
					f.Value = args[i+1] + "=" + args[i+2]
				}
				i += n
			} else if n > 0 {
				p.Unknown = append(p.Unknown, a)
				continue
			}
			p.Flags = append(p.Flags, f)
			continue
		}
		for j := 1; j < len(a); j++ {
			name, ok := short[a[j]]
			if !ok || dyn[i] {
				p.Unknown = append(p.Unknown, a)
				break
			}
			f := Flag{Name: name, Index: i, Effect: effects[strings.TrimPrefix(name, "--")]}
			if a[j] == 'L' {
				if j+1 < len(a) {
					f.Value, f.HasValue = a[j+1:], true
				} else if i+1 < len(args) {
					i++
					f.Value, f.HasValue, f.ValueDynamic = args[i], true, dyn[i]
				}
				p.Flags = append(p.Flags, f)
				break
			}
			p.Flags = append(p.Flags, f)
		}
	}
	return p
}

// parseXxd follows xxd's own parser: single-dash options matched by their
// first letters (`-c 8`, `-c8`, `-cols 8`), no grouping, and at most an
// input and an output file.
func parseXxd(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	// Long spellings xxd accepts, by the canonical short option.
	type xopt struct {
		canon string
		long  string
		arg   bool
	}
	opts := []xopt{{"-a", "autoskip", false}, {"-b", "bits", false}, {"-C", "capitalize", false},
		{"-c", "cols", true}, {"-E", "EBCDIC", false}, {"-e", "", false}, {"-g", "groupsize", true},
		{"-h", "help", false}, {"-i", "include", false}, {"-l", "len", true}, {"-n", "name", true},
		{"-o", "offset", true}, {"-p", "postscript", false}, {"-r", "revert", false}, {"-d", "", false},
		{"-s", "seek", true}, {"-u", "upper", false}, {"-v", "version", false}, {"-R", "", true}}
	rest := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] && !rest && dynamicPrefix(a) == "" {
			p.MaybeOptions = append(p.MaybeOptions, i)
		}
		if rest || len(a) < 2 || a[0] != '-' || dyn[i] {
			if !rest && dyn[i] && len(dynamicPrefix(a)) > 0 && a[0] == '-' {
				p.Unknown = append(p.Unknown, a)
				continue
			}
			p.Operands = append(p.Operands, i)
			continue
		}
		if a == "--" {
			rest = true
			continue
		}
		word := strings.TrimPrefix(a[1:], "-")
		var found *xopt
		for k := range opts {
			o := &opts[k]
			if word[0] != o.canon[1] {
				continue
			}
			if len(word) == 1 || o.long != "" && strings.HasPrefix(o.long, word) ||
				o.canon == "-p" && (word == "ps" || strings.HasPrefix("plain", word)) {
				found = o
				break
			}
			if o.arg {
				// An attached value: `-c8`, `-s+16`.
				found = o
				break
			}
		}
		if found == nil {
			p.Unknown = append(p.Unknown, a)
			continue
		}
		f := Flag{Name: found.canon, Index: i}
		if found.arg {
			switch {
			case len(word) > 1 && !(found.long != "" && strings.HasPrefix(found.long, word)):
				f.Value, f.HasValue = word[1:], true
			case i+1 < len(args):
				i++
				f.Value, f.HasValue, f.ValueDynamic = args[i], true, dyn[i]
			default:
				p.Unknown = append(p.Unknown, a)
				continue
			}
		}
		p.Flags = append(p.Flags, f)
	}
	return p
}

// parseTree follows tree's parser: grouped short flags whose values are
// the following words in order (`-oL out 2`), long options exact with
// `=value` or the next word.
func parseTree(args []string, dyn []bool) Parsed {
	p := Parsed{Model: true, SubIndex: -1}
	shortArg := map[byte]Effect{'L': "", 'P': "", 'I': "", 'H': "", 'T': "", 'o': EffectWrite}
	shortNone := "adlfxRpugshDFqNQvtcUrASnCXJi"
	long := map[string]Effect{"help": "", "version": "", "inodes": "", "device": "", "noreport": "", "nolinks": "",
		"dirsfirst": "", "filesfirst": "", "gitignore": "", "info": "", "prune": "", "du": "", "si": "",
		"matchdirs": "", "metafirst": "", "ignore-case": "", "fromfile": "", "fromtabfile": "", "fflinks": "",
		"condense": "", "hyperlink": "", "noindent": ""}
	longArg := map[string]Effect{"filelimit": "", "timefmt": "", "charset": "", "sort": "", "gitfile": EffectConfig,
		"infofile": EffectRead, "hintro": EffectRead, "houtro": EffectRead, "opt-toggle": "", "scheme": "", "authority": "",
		"output": EffectWrite}
	rest := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dyn[i] && !rest && dynamicPrefix(a) == "" {
			p.MaybeOptions = append(p.MaybeOptions, i)
		}
		if rest || len(a) < 2 || a[0] != '-' || dyn[i] {
			if !rest && dyn[i] && len(a) > 1 && a[0] == '-' {
				p.Unknown = append(p.Unknown, a)
				continue
			}
			p.Operands = append(p.Operands, i)
			continue
		}
		if a == "--" {
			rest = true
			continue
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			n, val, hasVal := strings.Cut(name, "=")
			if e, ok := longArg[n]; ok {
				f := Flag{Name: "--" + n, Index: i, Effect: e, HasValue: true, Value: val}
				if !hasVal {
					if i+1 >= len(args) {
						p.Unknown = append(p.Unknown, a)
						continue
					}
					i++
					f.Value, f.ValueDynamic = args[i], dyn[i]
				}
				p.Flags = append(p.Flags, f)
				continue
			}
			if _, ok := long[n]; ok && !hasVal {
				p.Flags = append(p.Flags, Flag{Name: "--" + n, Index: i})
				continue
			}
			p.Unknown = append(p.Unknown, a)
			continue
		}
		next := i
		for j := 1; j < len(a); j++ {
			c := a[j]
			if e, ok := shortArg[c]; ok {
				next++
				if next >= len(args) {
					p.Unknown = append(p.Unknown, a)
					break
				}
				p.Flags = append(p.Flags, Flag{Name: "-" + string(c), Index: i, Effect: e, Value: args[next], HasValue: true, ValueDynamic: dyn[next]})
				continue
			}
			if strings.IndexByte(shortNone, c) < 0 {
				p.Unknown = append(p.Unknown, a)
				break
			}
			p.Flags = append(p.Flags, Flag{Name: "-" + string(c), Index: i})
		}
		i = next
	}
	return p
}
