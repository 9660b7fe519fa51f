package shell

import "strings"

// sed and awk carry programs of their own: their scripts name files they
// read (sed r/R, awk getline < f), write (sed w/W, awk print > f) and
// commands they run (sed e, awk system() and pipes). The scripts are read
// far enough to find those; anything not understood is unprovable.

// readSed classifies sed: scripts from -e or the first operand, files
// from the rest, written in place with -i.
func readSed(c *classCtx) {
	ops := c.p.Operands
	var scripts []int // argument indexes of script words
	for _, f := range c.p.Flags {
		switch f.Name {
		case "--expression":
			if f.ValueDynamic {
				c.unprovable("sed script is not a literal")
				continue
			}
			c.sedScript(f.Value)
			scripts = append(scripts, f.Index)
		case "--file":
			c.unprovable("sed reads its script from a file")
			scripts = append(scripts, f.Index)
		}
	}
	if len(scripts) == 0 && len(ops) > 0 {
		i := ops[0]
		ops = ops[1:]
		if c.dyn[i] {
			c.unprovable("sed script is not a literal")
		} else {
			c.sedScript(c.args[i])
		}
	}
	inPlace := c.p.Has("--in-place")
	for _, i := range ops {
		if c.args[i] == "-" {
			continue
		}
		if inPlace {
			c.write(i, OpWrite)
		}
		c.read(i)
	}
}

// sedScript records what a sed script reads, writes and runs.
func (c *classCtx) sedScript(s string) {
	reads, writes, ok := parseSedScript(s)
	if !ok {
		c.unprovable("sed script runs commands (e) or is not understood: " + s)
		return
	}
	for _, r := range reads {
		if r != "/dev/stdin" && r != "-" {
			c.target(r, false, OpRead)
		}
	}
	for _, w := range writes {
		c.target(w, false, OpWrite)
		if !IsHarmlessDevice(w) {
			c.info.writes, c.notProven = true, true
		}
	}
}

// parseSedScript parses a GNU sed script far enough to find the files
// r, R, w, W and s///w name. ok is false for e, s///e and anything not
// understood.
func parseSedScript(s string) (reads, writes []string, ok bool) {
	i := 0
	skipBlank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() string {
		skipBlank()
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := s[i : i+j]
		i += j
		return v
	}
	delimited := func(d byte) bool {
		for i < len(s) {
			c := s[i]
			if c == '\\' {
				i += 2
				continue
			}
			if c == '\n' && d != '\n' {
				return false
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
			return reads, writes, true
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		// Address: numbers, $, /re/, \cREc, ranges, steps, negation.
	addr:
		for i < len(s) {
			c := s[i]
			switch {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '!' || c == '+' || c == ' ' || c == '\t':
				i++
			case c == '/':
				i++
				if !delimited('/') {
					return nil, nil, false
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case c == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if !delimited(d) {
					return nil, nil, false
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			default:
				break addr
			}
		}
		if i >= len(s) {
			return nil, nil, false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
		case 's', 'y':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return nil, nil, false
			}
			d := s[i]
			i++
			// Once for the pattern, once more for the replacement.
			if !delimited(d) {
				return nil, nil, false
			}
			if !delimited(d) {
				return nil, nil, false
			}
			if c == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				f := s[i]
				switch {
				case f == 'w':
					i++
					w := toEOL()
					if w == "" {
						return nil, nil, false
					}
					writes = append(writes, w)
					continue
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9' || f == ' ' || f == '\t':
				default:
					// e runs the pattern space; anything else is unknown.
					return nil, nil, false
				}
				i++
			}
		case 'r', 'R':
			r := toEOL()
			if r == "" {
				return nil, nil, false
			}
			reads = append(reads, r)
		case 'w', 'W':
			w := toEOL()
			if w == "" {
				return nil, nil, false
			}
			writes = append(writes, w)
		case 'a', 'i', 'c':
			// Text runs to the end of the line, continued by a
			// trailing backslash.
			for {
				line := toEOL()
				if !strings.HasSuffix(line, "\\") || i >= len(s) {
					break
				}
				i++
			}
		case 'b', 't', 'T', ':':
			// A label ends at ';' in GNU sed: stopping there too means a
			// command after it is still checked.
			for i < len(s) && strings.IndexByte(";\n", s[i]) < 0 {
				i++
			}
		case 'l', 'L', 'q', 'Q':
			skipBlank()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=', 'z', 'F':
		case 'v':
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				i++
			}
		default:
			// e and anything unknown.
			return nil, nil, false
		}
	}
	return reads, writes, true
}

// readAwk classifies awk: the program from the first operand unless -f,
// -e or -E gave one; files from the rest, except var=value assignments.
func readAwk(c *classCtx) {
	ops := c.p.Operands
	given := false
	for _, f := range c.p.Flags {
		switch f.Name {
		case "--file", "-f":
			given = true
			c.unprovable("awk reads its program from a file")
		case "--source":
			given = true
			if f.ValueDynamic {
				c.unprovable("awk program is not a literal")
			} else {
				c.awkProgram(f.Value)
			}
		}
	}
	if !given && len(ops) > 0 {
		i := ops[0]
		ops = ops[1:]
		if c.dyn[i] {
			c.unprovable("awk program is not a literal")
		} else {
			c.awkProgram(c.args[i])
		}
	}
	for _, i := range ops {
		a := c.args[i]
		if k := strings.IndexByte(a, '='); k > 0 && isIdent(a[:k]) {
			// An assignment operand, not a file.
			continue
		}
		if a != "-" {
			c.read(i)
		}
	}
}

func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// awkProgram records what an awk program does beyond reading its input.
func (c *classCtx) awkProgram(prog string) {
	r := scanAwk(prog)
	switch {
	case r.bad != "":
		c.unprovable("awk program " + r.bad)
	case r.secret:
		c.info.secrets = append(c.info.secrets, "awk reads the environment (ENVIRON)")
	}
	for _, f := range r.reads {
		c.target(f, false, OpRead)
	}
	if r.unknownReads {
		c.target("<files the awk program opens>", true, OpRead)
	}
}

// awkScan is what scanAwk found.
type awkScan struct {
	// bad says why the program may write files or run commands.
	bad          string
	secret       bool
	reads        []string
	unknownReads bool
}

// scanAwk tokenises an awk program (strings, regular expressions,
// comments) and looks for what reaches outside: system(), pipes, output
// redirection in print statements, getline from files or commands,
// ENVIRON, ARGV changes and gawk's @include/@load.
func scanAwk(p string) awkScan {
	var r awkScan
	inPrint := false
	prevOperand := false // the previous token ends an operand: '/' divides
	lastWord := ""
	i := 0
	for i < len(p) {
		c := p[i]
		switch {
		case c == '\n' || c == ';' || c == '}' || c == '{':
			if c != '\n' || !strings.HasSuffix(strings.TrimRight(p[:i], " \t"), ",") {
				inPrint = false
			}
			prevOperand = c == '}'
			i++
		case c == ' ' || c == '\t' || c == '\\' && i+1 < len(p) && p[i+1] == '\n':
			i++
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		case c == '"':
			j := i + 1
			for j < len(p) && p[j] != '"' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p) {
				r.bad = "has an unterminated string"
				return r
			}
			lastWord = "\"" + p[i+1:j]
			i = j + 1
			prevOperand = true
		case c == '/' && !prevOperand:
			j := i + 1
			for j < len(p) && p[j] != '/' {
				switch p[j] {
				case '\\':
					j++
				case '\n':
					r.bad = "has an unterminated regular expression"
					return r
				}
				j++
			}
			if j >= len(p) {
				r.bad = "has an unterminated regular expression"
				return r
			}
			i = j + 1
			prevOperand = true
		case isIdentByte(c) || c == '@' || c == '$':
			j := i + 1
			for j < len(p) && isIdentByte(p[j]) {
				j++
			}
			w := p[i:j]
			switch w {
			case "system", "@include", "@load", "@namespace", "@nsinclude":
				r.bad = "uses " + w
				return r
			case "print", "printf":
				inPrint = true
			case "getline":
				if lastWord == "|" {
					r.bad = "reads the output of a command (| getline)"
					return r
				}
				rest := strings.TrimLeft(p[j:], " \t")
				// getline [var] < file
				k := 0
				for k < len(rest) && (isIdentByte(rest[k]) || rest[k] == '$') {
					k++
				}
				if strings.HasPrefix(strings.TrimLeft(rest[k:], " \t"), "<") {
					after := strings.TrimLeft(strings.TrimLeft(rest[k:], " \t")[1:], " \t")
					if s, ok := strings.CutPrefix(after, "\""); ok {
						if e := strings.IndexByte(s, '"'); e >= 0 && !strings.Contains(s[:e], "\\") {
							r.reads = append(r.reads, s[:e])
						} else {
							r.unknownReads = true
						}
					} else {
						r.unknownReads = true
					}
				}
			case "ENVIRON", "PROCINFO":
				r.secret = true
			case "ARGV", "ARGC":
				// Changing them makes awk read other files.
				r.unknownReads = true
			}
			lastWord = w
			prevOperand = w != "print" && w != "printf" && w != "return" && w != "in"
			i = j
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i += 2
				prevOperand = false
				lastWord = "||"
				continue
			}
			if inPrint || i+1 < len(p) && p[i+1] == '&' {
				r.bad = "pipes its output to a command"
				return r
			}
			// `"cmd" | getline` is judged at getline.
			lastWord = "|"
			prevOperand = false
			i++
		case c == '>':
			if inPrint {
				r.bad = "redirects its output to a file"
				return r
			}
			lastWord = ">"
			prevOperand = false
			i++
		case c == '<':
			lastWord = "<"
			prevOperand = false
			i++
		default:
			prevOperand = c == ')' || c == ']'
			if c != ')' && c != ']' {
				lastWord = string(c)
			}
			i++
		}
	}
	return r
}
