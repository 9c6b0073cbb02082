package secrets

// acMatcher is an Aho-Corasick automaton over ASCII-case-folded bytes,
// compiled to a dense transition table. Keywords are lowercase ASCII (the
// rule loader checks), so folding A-Z while scanning is equivalent to
// gitleaks' strings.ToLower of the whole text, without allocating a lowered
// copy. Bytes that occur in no keyword share one class, which keeps the
// table small (states × classes) and cache friendly.
type acMatcher struct {
	class  [256]uint8 // byte -> class; 0 is "in no keyword"
	nclass int
	delta  []int32 // state*nclass + class -> next state
	// next is delta for the scan loop: targets premultiplied by nclass,
	// complemented (negative) when the target state has outputs, so the
	// loop needs no multiply and no second lookup.
	next     []int32
	out      [][]int32
	hasOut   []bool
	keywords []string
}

// acHit is one keyword occurrence: the keyword index and the offset just
// past its last byte.
type acHit struct {
	end int
	kw  int32
}

func newACMatcher(keywords []string) *acMatcher {
	m := &acMatcher{keywords: keywords}
	// Byte classes.
	next := uint8(1)
	for _, k := range keywords {
		for i := 0; i < len(k); i++ {
			c := k[i]
			if m.class[c] == 0 {
				m.class[c] = next
				next++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		m.class[c] = m.class[c+'a'-'A']
	}
	m.nclass = int(next)

	// Trie.
	type node struct {
		next map[uint8]int32
		out  []int32
		fail int32
	}
	nodes := []node{{next: map[uint8]int32{}}}
	for ki, k := range keywords {
		s := int32(0)
		for i := 0; i < len(k); i++ {
			c := m.class[k[i]]
			t, ok := nodes[s].next[c]
			if !ok {
				nodes = append(nodes, node{next: map[uint8]int32{}})
				t = int32(len(nodes) - 1)
				nodes[s].next[c] = t
			}
			s = t
		}
		nodes[s].out = append(nodes[s].out, int32(ki))
	}

	// Breadth-first: failure links, merged outputs, dense table.
	m.delta = make([]int32, len(nodes)*m.nclass)
	m.out = make([][]int32, len(nodes))
	m.hasOut = make([]bool, len(nodes))
	queue := []int32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		if s != 0 {
			nodes[s].out = append(nodes[s].out, m.out[f]...)
		}
		m.out[s] = nodes[s].out
		m.hasOut[s] = len(m.out[s]) > 0
		for c := 0; c < m.nclass; c++ {
			if t, ok := nodes[s].next[uint8(c)]; ok && c != 0 {
				if s == 0 {
					nodes[t].fail = 0
				} else {
					nodes[t].fail = m.delta[int(f)*m.nclass+c]
				}
				m.delta[int(s)*m.nclass+c] = t
				queue = append(queue, t)
			} else if s == 0 {
				m.delta[c] = 0
			} else {
				m.delta[int(s)*m.nclass+c] = m.delta[int(f)*m.nclass+c]
			}
		}
	}
	m.next = make([]int32, len(m.delta))
	for i, t := range m.delta {
		v := t * int32(m.nclass)
		if m.hasOut[t] {
			v = ^v
		}
		m.next[i] = v
	}
	return m
}

// scan appends every keyword occurrence in text, overlapping ones
// included, in order of end offset.
func (m *acMatcher) scan(text string, hits []acHit) []acHit {
	var (
		s     int32 // premultiplied: state*nclass
		next  = m.next
		class = &m.class
	)
	for i := 0; i < len(text); i++ {
		s = next[s+int32(class[text[i]])]
		if s < 0 {
			s = ^s
			for _, k := range m.out[s/int32(m.nclass)] {
				hits = append(hits, acHit{end: i + 1, kw: k})
			}
		}
	}
	return hits
}

// contains reports whether any keyword occurs in text.
func (m *acMatcher) contains(text string) bool {
	var s int32
	for i := 0; i < len(text); i++ {
		if s = m.next[s+int32(m.class[text[i]])]; s < 0 {
			return true
		}
	}
	return false
}
