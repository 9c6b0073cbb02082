package secrets

import (
	"math/bits"
	"regexp/syntax"
	"unicode"
)

// headNFA answers a keyword-anchored rule's head test on ASCII text
// without Go's regexp: a position (Glushkov) automaton of the head, whose
// states are bit sets of at most maxHeadPositions positions. The head is
// bounded, so its repetitions expand into a few dozen positions, and a
// step is a handful of word operations, where the backtracker explores
// every split of the head's optional runs. It answers only on ASCII text
// (on a non-ASCII byte the caller runs the regexp): every class is then a
// set of bytes, case folding included.
type headNFA struct {
	match    [utf8RuneSelf]posSet
	first    posSet
	last     posSet
	follow   []posSet
	nullable bool
	dfa      *headDFA // the same automaton made deterministic; nil if too big
}

const (
	utf8RuneSelf     = 0x80
	maxHeadPositions = 128
)

type posSet [maxHeadPositions / 64]uint64

func (s posSet) or(t posSet) posSet {
	for i := range s {
		s[i] |= t[i]
	}
	return s
}

func (s posSet) and(t posSet) posSet {
	for i := range s {
		s[i] &= t[i]
	}
	return s
}

func (s posSet) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// newHeadNFA builds the automaton of head, a concatenation that starts
// with \A; nil when the head uses what the automaton does not model (other
// assertions, too many positions).
func newHeadNFA(head *syntax.Regexp) *headNFA {
	if head.Op != syntax.OpConcat || len(head.Sub) == 0 || head.Sub[0].Op != syntax.OpBeginText {
		return nil
	}
	body := &syntax.Regexp{Op: syntax.OpConcat, Sub: head.Sub[1:]}
	b := &nfaBuilder{m: &headNFA{}}
	nullable, first, last, ok := b.build(body.Simplify())
	if !ok {
		return nil
	}
	b.m.nullable, b.m.first, b.m.last = nullable, first, last
	b.m.dfa = newHeadDFA(b.m, true)
	return b.m
}

// newLiveDFA returns an automaton of a superset of the prefixes of re's
// matches on ASCII text, for [headDFA.deadAt]; nil when it cannot be
// built. Every assertion is taken to hold and every counted repetition
// to be unbounded, which only widens the language.
func newLiveDFA(re *syntax.Regexp) *headDFA {
	b := &nfaBuilder{m: &headNFA{}}
	nullable, first, last, ok := b.build(loosen(re).Simplify())
	if !ok {
		return nil
	}
	b.m.nullable, b.m.first, b.m.last = nullable, first, last
	return newHeadDFA(b.m, false)
}

// loosen returns a copy of re in which assertions match the empty string
// and x{n,m} is x*.
func loosen(re *syntax.Regexp) *syntax.Regexp {
	c := *re
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		c.Sub[i] = loosen(sub)
	}
	switch c.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpRepeat:
		c.Op, c.Min, c.Max = syntax.OpStar, 0, 0
	}
	return &c
}

type nfaBuilder struct {
	m *headNFA
	n int
}

// position adds a position that matches the ASCII bytes in set.
func (b *nfaBuilder) position(set func(c byte) bool) (posSet, bool) {
	if b.n == maxHeadPositions {
		return posSet{}, false
	}
	p := b.n
	b.n++
	b.m.follow = append(b.m.follow, posSet{})
	for c := 0; c < utf8RuneSelf; c++ {
		if set(byte(c)) {
			b.m.match[c][p/64] |= 1 << (p % 64)
		}
	}
	var s posSet
	s[p/64] |= 1 << (p % 64)
	return s, true
}

// link makes every position in from followed by every position in to.
func (b *nfaBuilder) link(from, to posSet) {
	for i, w := range from {
		for w != 0 {
			p := i*64 + bits.TrailingZeros64(w)
			w &= w - 1
			b.m.follow[p] = b.m.follow[p].or(to)
		}
	}
}

// build returns whether re matches the empty string and its first and
// last positions (Glushkov's construction).
func (b *nfaBuilder) build(re *syntax.Regexp) (nullable bool, first, last posSet, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return true, posSet{}, posSet{}, true
	case syntax.OpLiteral:
		nullable = true
		for _, r := range re.Rune {
			fold := re.Flags&syntax.FoldCase != 0
			s, ok := b.position(func(c byte) bool { return sameRune(rune(c), r, fold) })
			if !ok {
				return false, first, last, false
			}
			nullable, first, last = b.concat(nullable, first, last, false, s, s)
		}
		return nullable, first, last, true
	case syntax.OpCharClass:
		s, ok := b.position(func(c byte) bool { return inClass(re, rune(c)) })
		return false, s, s, ok
	case syntax.OpAnyCharNotNL:
		s, ok := b.position(func(c byte) bool { return c != '\n' })
		return false, s, s, ok
	case syntax.OpAnyChar:
		s, ok := b.position(func(byte) bool { return true })
		return false, s, s, ok
	case syntax.OpCapture:
		return b.build(re.Sub[0])
	case syntax.OpConcat:
		nullable = true
		for _, sub := range re.Sub {
			n, f, l, ok := b.build(sub)
			if !ok {
				return false, first, last, false
			}
			nullable, first, last = b.concat(nullable, first, last, n, f, l)
		}
		return nullable, first, last, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			n, f, l, ok := b.build(sub)
			if !ok {
				return false, first, last, false
			}
			nullable, first, last = nullable || n, first.or(f), last.or(l)
		}
		return nullable, first, last, true
	case syntax.OpQuest, syntax.OpStar, syntax.OpPlus:
		n, f, l, ok := b.build(re.Sub[0])
		if !ok {
			return false, first, last, false
		}
		if re.Op != syntax.OpQuest {
			b.link(l, f)
		}
		return n || re.Op != syntax.OpPlus, f, l, true
	}
	// Assertions and anything Simplify leaves unexpanded.
	return false, first, last, false
}

// concat appends (n, f, l) to the sequence (nullable, first, last).
func (b *nfaBuilder) concat(nullable bool, first, last posSet, n bool, f, l posSet) (bool, posSet, posSet) {
	b.link(last, f)
	if nullable {
		first = first.or(f)
	}
	if n {
		last = last.or(l)
	} else {
		last = l
	}
	return nullable && n, first, last
}

// sameRune reports whether byte c matches the literal rune r.
func sameRune(c, r rune, fold bool) bool {
	if c == r {
		return true
	}
	if !fold {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == c {
			return true
		}
	}
	return false
}

// matchPrefix reports whether a prefix of text matches the head; ok is
// false when a non-ASCII byte is reached before the answer is known.
func (m *headNFA) matchPrefix(text string) (matched, ok bool) {
	if m.nullable {
		return true, true
	}
	if m.dfa != nil {
		return m.dfa.matchPrefix(text)
	}
	return m.matchPrefixNFA(text)
}

// matchPrefixNFA is matchPrefix by stepping the position sets.
func (m *headNFA) matchPrefixNFA(text string) (matched, ok bool) {
	var d posSet
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8RuneSelf {
			return false, false
		}
		next := m.first
		if i > 0 {
			next = m.followOf(d)
		}
		next = next.and(m.match[c])
		if next.empty() {
			return false, true
		}
		if !next.and(m.last).empty() {
			return true, true
		}
		d = next
	}
	return false, true
}

// headDFA is a headNFA made deterministic (subset construction), built
// once in New: a step is one table lookup, where the position sets cost a
// union of follow sets per active position, and generic-api-key's head,
// with its runs of optional characters, keeps a dozen or more active at
// every keyword hit of keyword-dense text. Its states are the non-empty
// position sets reachable from the start (for a head, those that hold no
// last position: reaching one, or the empty set, ends the walk).
type headDFA struct {
	class  [utf8RuneSelf]uint8 // byte -> class of bytes no position tells apart
	nclass int
	trans  []int32 // state*nclass + class -> next state, dfaDead or dfaMatch
}

const (
	dfaDead  = -1
	dfaMatch = -2
	// maxDFAStates bounds the table (states × classes × 4 bytes); a head
	// that needs more keeps stepping position sets.
	maxDFAStates = 4096
)

// newHeadDFA builds m's table, or nil when it would exceed maxDFAStates.
// With stopAtMatch false (newLiveDFA) a last position does not end the
// walk: only the empty set does.
func newHeadDFA(m *headNFA, stopAtMatch bool) *headDFA {
	d := &headDFA{}
	classOf := map[posSet]uint8{}
	var reps []byte // a byte of each class
	for c := range utf8RuneSelf {
		k, ok := classOf[m.match[c]]
		if !ok {
			k = uint8(len(reps))
			classOf[m.match[c]] = k
			reps = append(reps, byte(c))
		}
		d.class[c] = k
	}
	d.nclass = len(reps)
	// State 0 is the start, whose successors are the first positions;
	// every other state's are the union of its positions' follow sets.
	follows := []posSet{m.first}
	ids := map[posSet]int32{}
	for s := 0; s < len(follows); s++ {
		for _, c := range reps {
			next := follows[s].and(m.match[c])
			switch {
			case next.empty():
				d.trans = append(d.trans, dfaDead)
			case stopAtMatch && !next.and(m.last).empty():
				d.trans = append(d.trans, dfaMatch)
			default:
				id, ok := ids[next]
				if !ok {
					if len(follows) == maxDFAStates {
						return nil
					}
					id = int32(len(follows))
					ids[next] = id
					follows = append(follows, m.followOf(next))
				}
				d.trans = append(d.trans, id)
			}
		}
	}
	return d
}

// followOf returns the union of the follow sets of the positions in s.
func (m *headNFA) followOf(s posSet) posSet {
	var f posSet
	for j, w := range s {
		for w != 0 {
			f = f.or(m.follow[j*64+bits.TrailingZeros64(w)])
			w &= w - 1
		}
	}
	return f
}

// matchPrefix is headNFA.matchPrefix for a head that is not nullable.
func (d *headDFA) matchPrefix(text string) (matched, ok bool) {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8RuneSelf {
			return false, false
		}
		s = d.trans[int(s)*d.nclass+int(d.class[c])]
		if s < 0 {
			return s == dfaMatch, true
		}
	}
	return false, true
}

// deadAt returns the offset of the first byte of text that no prefix of
// a match can continue with: a match of the regexp newLiveDFA was built
// from, started at text[0], reads no byte after it. ok is false when the
// text ends first or a non-ASCII byte comes first.
func (d *headDFA) deadAt(text string) (n int, ok bool) {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8RuneSelf {
			return 0, false
		}
		if s = d.trans[int(s)*d.nclass+int(d.class[c])]; s == dfaDead {
			return i, true
		}
	}
	return 0, false
}
