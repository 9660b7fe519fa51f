package store

// keywordSet finds every occurrence of a set of keywords in a text in one
// pass, ignoring ASCII case: an Aho–Corasick automaton compiled to a
// table-driven DFA. Redaction runs it over every string kz persists, so
// the common case, text that holds no keyword, costs one table lookup per
// byte and nothing else.
//
// A maintained Go library was considered: gitleaks itself uses
// github.com/BobuSumisu/aho-corasick, which needs the text lowercased
// first (a copy of every string) and allocates a slice of matches per
// call. Keywords are plain ASCII and the automaton is some eighty lines,
// so kz keeps its own, allocation-free one.
type keywordSet struct {
	words []string
	// class maps a byte to its column in next: the bytes that occur in no
	// keyword share column 0, and a letter shares its column with its
	// other case, which is how case is ignored.
	class  [256]uint8
	nclass uint32
	// next is the DFA: next[state+class] is the following state, states
	// being premultiplied by nclass; outFlag marks a state where at least
	// one keyword ends.
	next []uint32
	// outs[outStart[i]:outStart[i+1]] are the keywords that end at state
	// number i (its own and its suffixes').
	outStart []int32
	outs     []int32
}

const outFlag = 1 << 31

// newKeywordSet compiles words, which must be non-empty ASCII; they are
// matched without regard to ASCII case.
func newKeywordSet(words []string) *keywordSet {
	k := &keywordSet{words: words}
	var used [256]bool
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			used[lowerASCII(w[i])] = true
		}
	}
	n := uint8(1)
	for b := 0; b < 256; b++ {
		if used[b] {
			k.class[b] = n
			n++
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		k.class[b] = k.class[b+'a'-'A']
	}
	k.nclass = uint32(n)
	// Build the trie: goto holds a child state or 0 (the root is never a
	// child).
	nc := int(n)
	size := 1
	for _, w := range words {
		size += len(w)
	}
	goTo := make([]int32, nc, size*nc)
	ends := make([][]int32, 1, size)
	for wi, w := range words {
		s := 0
		for i := 0; i < len(w); i++ {
			c := int(k.class[w[i]])
			if goTo[s*nc+c] == 0 {
				goTo[s*nc+c] = int32(len(ends))
				goTo = goTo[:len(goTo)+nc]
				ends = append(ends, nil)
			}
			s = int(goTo[s*nc+c])
		}
		ends[s] = append(ends[s], int32(wi))
	}
	states := len(ends)
	// Breadth first, fill in the failure transitions and inherit the
	// keywords of each state's longest proper suffix.
	fail := make([]int32, states)
	delta := make([]int32, states*nc)
	queue := make([]int32, 0, states)
	for c := 0; c < nc; c++ {
		if t := goTo[c]; t != 0 {
			delta[c] = t
			queue = append(queue, t)
		}
	}
	for qi := 0; qi < len(queue); qi++ {
		s := int(queue[qi])
		ends[s] = append(ends[s], ends[fail[s]]...)
		for c := 0; c < nc; c++ {
			if t := goTo[s*nc+c]; t != 0 {
				fail[t] = delta[int(fail[s])*nc+c]
				delta[s*nc+c] = t
				queue = append(queue, t)
			} else {
				delta[s*nc+c] = delta[int(fail[s])*nc+c]
			}
		}
	}
	k.next = make([]uint32, len(delta))
	for i, t := range delta {
		k.next[i] = uint32(t) * k.nclass
		if len(ends[t]) > 0 {
			k.next[i] |= outFlag
		}
	}
	k.outStart = make([]int32, states+1)
	for s := range states {
		k.outStart[s+1] = k.outStart[s] + int32(len(ends[s]))
		k.outs = append(k.outs, ends[s]...)
	}
	return k
}

// any says whether s holds at least one keyword.
func (k *keywordSet) any(s string) bool {
	next, class := k.next, &k.class
	st := uint32(0)
	for i := 0; i < len(s); i++ {
		t := next[st+uint32(class[s[i]])]
		if t&outFlag != 0 {
			return true
		}
		st = t
	}
	return false
}

// scan calls fn for every occurrence of a keyword in s, in the order of
// their ends, with the keyword's index and the occurrence's end.
func (k *keywordSet) scan(s string, fn func(word, end int)) {
	next, class := k.next, &k.class
	st := uint32(0)
	for i := 0; i < len(s); i++ {
		t := next[st+uint32(class[s[i]])]
		st = t &^ outFlag
		if t&outFlag != 0 {
			n := st / k.nclass
			for _, w := range k.outs[k.outStart[n]:k.outStart[n+1]] {
				fn(int(w), i+1)
			}
		}
	}
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
