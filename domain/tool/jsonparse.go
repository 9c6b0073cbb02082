package tool

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The JSON reader behind [Canonicalize], [CheckSchema], [NewDefinition]
// and [Schema.Check]: jsontext reads the syntax; this file builds a flat
// tree from its tokens (nodes and child indexes in two slices, strings as
// spans of the input or decoded into one buffer), checks what jsontext
// leaves to its caller (surrogates, number range, duplicate keys, depth)
// and writes the canonical form (RFC 8785) from the tree, so the schema
// rule, the canonical form and the hash read the input once.
//
// The order of precedence of a refusal: a syntax error or invalid UTF-8
// anywhere is ErrInvalidJSON; else a lone surrogate escape anywhere; else
// the first, in document order, of a number out of range, a duplicate key
// or nesting deeper than MaxJSONDepth. Error values are built only by a
// caller that returns them ([parseFailure.err]).

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// jnode is one JSON value of the tree.
//
//   - string: the decoded text is src[lo:hi], or strs[lo:hi] when esc;
//   - number: the literal is src[lo:hi], num its value; plainInt marks an
//     integer literal of at most 15 digits, whose canonical form is the
//     literal itself (except -0);
//   - array: its n elements are kids[lo:lo+n];
//   - object: kids[lo:lo+2n] are its n (key, value) pairs in input order,
//     kids[lo+2n:lo+3n] the member ordinals sorted by key (RFC 8785).
//
// pos orders the values: the offset of a string's or number's first byte,
// of the white space and separator before a container or literal (see
// value); end is the offset just past the value (the offset
// encoding/json's decoder reported in its errors).
type jnode struct {
	kind     kind
	b        bool
	esc      bool
	plainInt bool
	lo, hi   int
	n        int
	pos, end int
	num      float64
}

// failCode is why the input was refused.
type failCode uint8

const (
	failNone failCode = iota
	failSyntax
	failSurrogate
	failRange
	failDuplicate
	failDepth
)

// parseFailure is a refusal without its error value; offset is the byte
// offset the message names (numbers and duplicate keys).
type parseFailure struct {
	code   failCode
	offset int
}

// err is the refusal as [Canonicalize] returns it.
func (f parseFailure) err() error {
	switch f.code {
	case failNone:
		return nil
	case failSurrogate:
		return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
	case failRange:
		return fmt.Errorf("%w at offset %d", ErrNumberRange, f.offset)
	case failDuplicate:
		return fmt.Errorf("%w at offset %d", ErrDuplicateKey, f.offset)
	case failDepth:
		return fmt.Errorf("%w (limit %d)", ErrTooDeep, MaxJSONDepth)
	}
	return ErrInvalidJSON
}

// problem is the short reason of an unsupported schema.
func (f parseFailure) problem() string {
	switch f.code {
	case failDuplicate:
		return "duplicate key"
	case failRange:
		return "number out of range"
	case failDepth:
		return "nested too deeply"
	}
	return "invalid JSON"
}

// parser holds the tree of one input and the scratch space of the
// canonical form; parsers are pooled, so a discovery of many tools reuses
// the same slices.
type parser struct {
	src   []byte
	buf   bytes.Buffer
	dec   *jsontext.Decoder
	nodes []jnode
	kids  []int
	stack []int  // children of the containers being read
	strs  []byte // decoded strings that had escapes
	out   []byte // canonical form, hash input

	lone    bool         // a lone surrogate escape was seen
	fail    parseFailure // the first semantic refusal by position
	failPos int
}

var parsers = sync.Pool{New: func() any {
	p := new(parser)
	p.dec = jsontext.NewDecoder(&p.buf)
	return p
}}

// maxPooledNodes keeps a parser that read a huge input out of the pool,
// so one hostile document does not pin its memory.
const maxPooledNodes = 1 << 14

func getParser() *parser { return parsers.Get().(*parser) }

func (p *parser) release() {
	if cap(p.nodes) > maxPooledNodes || cap(p.out) > 1<<20 || cap(p.strs) > 1<<20 || p.buf.Cap() > 1<<20 {
		return
	}
	p.src = nil
	p.buf.Reset()
	p.dec.Reset(&p.buf)
	parsers.Put(p)
}

// parse reads src, which must be exactly one JSON value with optional
// white space around it, and returns the index of its root node.
func (p *parser) parse(src []byte) (int, parseFailure) {
	p.src = src
	p.nodes, p.kids, p.stack, p.strs = p.nodes[:0], p.kids[:0], p.stack[:0], p.strs[:0]
	p.lone, p.fail, p.failPos = false, parseFailure{}, 0
	if !utf8.Valid(src) {
		return 0, parseFailure{code: failSyntax}
	}
	p.buf.Reset()
	p.buf.Write(src)
	// Duplicate names and surrogates are this reader's to refuse, after
	// any syntax error (precedence above).
	p.dec.Reset(&p.buf, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	root := p.value(0)
	if root < 0 {
		return 0, parseFailure{code: failSyntax}
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		return 0, parseFailure{code: failSyntax}
	}
	if p.lone {
		return 0, parseFailure{code: failSurrogate}
	}
	if p.fail.code != failNone {
		return 0, p.fail
	}
	return root, parseFailure{}
}

// refuse records a semantic refusal at input position pos; the earliest
// one wins, whatever order they are found in.
func (p *parser) refuse(code failCode, pos, offset int) {
	if p.fail.code == failNone || pos < p.failPos {
		p.fail, p.failPos = parseFailure{code: code, offset: offset}, pos
	}
}

func (p *parser) add(n jnode) int {
	p.nodes = append(p.nodes, n)
	return len(p.nodes) - 1
}

// value reads the next value; depth is the nesting of its container. It
// returns -1 on a syntax error.
func (p *parser) value(depth int) int {
	// For a container or a literal, pos is the offset before the white
	// space and separator ahead of it: no other value starts in between,
	// so the order of refusals is that of the values' first bytes.
	pos := int(p.dec.InputOffset())
	switch p.dec.PeekKind() {
	case '"':
		return p.string()
	case '0':
		return p.number()
	case '[', '{':
		return p.container(pos, depth+1)
	}
	tok, err := p.dec.ReadToken()
	if err != nil {
		return -1
	}
	n := jnode{kind: kindNull, pos: pos, end: int(p.dec.InputOffset())}
	if k := tok.Kind(); k == 't' || k == 'f' {
		n.kind, n.b = kindBool, k == 't'
	}
	return p.add(n)
}

// container reads an array or an object.
func (p *parser) container(pos, depth int) int {
	if depth > MaxJSONDepth {
		p.refuse(failDepth, pos, 0)
	}
	open, err := p.dec.ReadToken()
	if err != nil {
		return -1
	}
	closing := jsontext.Kind(']')
	if open.Kind() == '{' {
		closing = '}'
	}
	base := len(p.stack)
	for p.dec.PeekKind() != closing {
		v := p.value(depth)
		if v < 0 {
			return -1
		}
		p.stack = append(p.stack, v)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return -1
	}
	n := jnode{kind: kindArray, lo: len(p.kids), n: len(p.stack) - base, pos: pos, end: int(p.dec.InputOffset())}
	p.kids = append(p.kids, p.stack[base:]...)
	p.stack = p.stack[:base]
	if closing == '}' {
		n.kind, n.n = kindObject, n.n/2
		p.sortMembers(n.lo, n.n)
	}
	return p.add(n)
}

// sortMembers appends the member ordinals of the object whose n pairs
// start at kids[lo], sorted by key (RFC 8785), and refuses a duplicate.
func (p *parser) sortMembers(lo, n int) {
	for m := range n {
		p.kids = append(p.kids, m)
	}
	pairs, order := p.kids[lo:lo+2*n], p.kids[lo+2*n:lo+3*n]
	// Stable, so that among equal keys the second in input order follows
	// the first: the duplicate is the second.
	slices.SortStableFunc(order, func(a, b int) int {
		return compareUTF16(p.str(pairs[2*a]), p.str(pairs[2*b]))
	})
	for j := 1; j < n; j++ {
		prev, cur := pairs[2*order[j-1]], pairs[2*order[j]]
		if string(p.str(prev)) == string(p.str(cur)) {
			k := &p.nodes[cur]
			p.refuse(failDuplicate, k.pos, k.end)
		}
	}
}

// string reads a string: a span of the input, or decoded into p.strs when
// it has escapes.
func (p *parser) string() int {
	raw, err := p.dec.ReadValue()
	if err != nil {
		return -1
	}
	end := int(p.dec.InputOffset())
	pos := end - len(raw)
	n := jnode{kind: kindString, lo: pos + 1, hi: end - 1, pos: pos, end: end}
	if bytes.IndexByte(raw, '\\') >= 0 {
		n.esc, n.lo = true, len(p.strs)
		// The input is valid UTF-8 (parse): an error here is a lone
		// surrogate escape.
		p.strs, err = jsontext.AppendUnquote(p.strs, raw)
		p.lone = p.lone || err != nil
		n.hi = len(p.strs)
	}
	return p.add(n)
}

// number reads a number; the literal is src[lo:hi].
func (p *parser) number() int {
	raw, err := p.dec.ReadValue()
	if err != nil {
		return -1
	}
	end := int(p.dec.InputOffset())
	pos := end - len(raw)
	n := jnode{kind: kindNumber, lo: pos, hi: end, pos: pos, end: end}
	if v, ok := plainInt(raw); ok {
		// Exact in a float64, and printed as is by ECMAScript.
		n.num, n.plainInt = v, true
		return p.add(n)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		p.refuse(failRange, pos, n.end)
	}
	n.num = f
	return p.add(n)
}

// plainInt is the value of an integer literal of at most 15 digits.
func plainInt(lit []byte) (float64, bool) {
	digits := bytes.TrimPrefix(lit, []byte("-"))
	if len(digits) > 15 || bytes.ContainsAny(digits, ".eE") {
		return 0, false
	}
	var v int64
	for _, c := range digits {
		v = v*10 + int64(c-'0')
	}
	if lit[0] == '-' {
		return -float64(v), true
	}
	return float64(v), true
}

// str is the decoded text of the string node n.
func (p *parser) str(n int) []byte {
	nd := &p.nodes[n]
	if nd.esc {
		return p.strs[nd.lo:nd.hi]
	}
	return p.src[nd.lo:nd.hi]
}

// is reports whether node n is the string s.
func (p *parser) is(n int, s string) bool {
	return p.nodes[n].kind == kindString && string(p.str(n)) == s
}

// member returns the j-th (key, value) pair of object n, in input order or
// sorted by key.
func (p *parser) member(n, j int, sorted bool) (key, val int) {
	nd := &p.nodes[n]
	if sorted {
		j = p.kids[nd.lo+2*nd.n+j]
	}
	return p.kids[nd.lo+2*j], p.kids[nd.lo+2*j+1]
}

// get returns the value of object n's member key, or -1.
func (p *parser) get(n int, key string) int {
	for j := range p.nodes[n].n {
		if k, v := p.member(n, j, false); string(p.str(k)) == key {
			return v
		}
	}
	return -1
}

// compareUTF16 orders UTF-8 strings by their UTF-16 code units, as RFC
// 8785 section 3.2.3 asks: byte order, except that characters above U+FFFF
// (surrogate pairs in UTF-16) sort before U+E000–U+FFFF.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	// The runes differing at i start at the same offset in both.
	for i > 0 && a[i]&0xc0 == 0x80 {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmp.Compare(utf16Order(ra), utf16Order(rb))
}

func utf16Order(r rune) rune {
	switch {
	case r >= 0x10000:
		return 0xd800 + (r - 0x10000)
	case r >= 0xe000:
		return r + 0x110000
	}
	return r
}

// canonical returns the canonical form of node n, written in p.out and
// copied out.
func (p *parser) canonical(n int) []byte {
	p.out = p.write(p.out[:0], n)
	return append([]byte(nil), p.out...)
}

func (p *parser) write(b []byte, n int) []byte {
	nd := &p.nodes[n]
	switch nd.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		if nd.b {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case kindNumber:
		if nd.plainInt && nd.num != 0 {
			return append(b, p.src[nd.lo:nd.hi]...)
		}
		return appendNumber(b, nd.num)
	case kindString:
		if !nd.esc {
			// Without escapes the text has no quote, backslash or control
			// character: its canonical form is the input.
			b = append(b, '"')
			b = append(b, p.src[nd.lo:nd.hi]...)
			return append(b, '"')
		}
		return appendString(b, p.strs[nd.lo:nd.hi])
	case kindArray:
		b = append(b, '[')
		for j := range nd.n {
			if j > 0 {
				b = append(b, ',')
			}
			b = p.write(b, p.kids[nd.lo+j])
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for j := range nd.n {
		if j > 0 {
			b = append(b, ',')
		}
		k, v := p.member(n, j, true)
		b = p.write(b, k)
		b = append(b, ':')
		b = p.write(b, v)
	}
	return append(b, '}')
}

// appendString escapes only what RFC 8785 section 3.2.2.2 requires: the
// quote, the backslash and control characters. HTML characters, U+2028 and
// U+2029 stay literal, unlike encoding/json's default.
func appendString(b, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// appendNumber is ECMAScript's Number::toString (ECMA-262 section
// 6.1.6.1.20) as RFC 8785 section 3.2.2.3 prescribes: the shortest digits
// that round-trip, plain notation for exponents from -6 to 20, otherwise
// d.ddde±x. -0 becomes 0.
func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits: d.dddde±XX.
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	var digitBuf [24]byte
	digits := digitBuf[:0]
	j := 0
	for ; s[j] != 'e'; j++ {
		if s[j] != '.' {
			digits = append(digits, s[j])
		}
	}
	exp := 0
	for _, c := range s[j+2:] {
		exp = exp*10 + int(c-'0')
	}
	if s[j+1] == '-' {
		exp = -exp
	}
	k := len(digits)
	n := exp + 1 // ECMAScript's n: the decimal point sits after n digits.
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		e := n - 1
		if e < 0 {
			b = append(b, '-')
			e = -e
		} else {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(e), 10)
	}
	return b
}
