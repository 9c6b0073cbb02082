package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxJSONDepth is the deepest nesting of arrays and objects that
// [Canonicalize], [CheckSchema] and [Schema.Validate] accept. A supported
// schema needs a depth of three; 64 leaves room for unsupported schemas to be
// reported as such while keeping recursion on hostile input shallow.
const MaxJSONDepth = 64

// Errors of [Canonicalize]. They carry a byte offset at most, never the
// offending text, because the input may be model or server controlled.
var (
	// ErrInvalidJSON means the input is not one well-formed JSON text in
	// UTF-8 (syntax errors, trailing data, invalid UTF-8, lone surrogate
	// escapes such as "\ud800").
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrDuplicateKey means an object names the same key twice (after
	// unescaping); RFC 8785 and I-JSON forbid it and two parsers could
	// otherwise disagree about which value counts.
	ErrDuplicateKey = errors.New("duplicate object key")
	// ErrNumberRange means a number does not fit a finite float64.
	ErrNumberRange = errors.New("number out of range")
	// ErrTooDeep means arrays and objects nest deeper than [MaxJSONDepth].
	ErrTooDeep = errors.New("JSON nested too deeply")
)

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of
// raw: object members sorted by the UTF-16 code units of their keys, no
// insignificant whitespace, numbers serialised as ECMAScript does, strings
// with only the mandatory escapes. Two texts with the same meaning have the
// same canonical bytes, so hashes over schemas do not change with key order
// or formatting. Numbers are IEEE 754 doubles as in RFC 8785: integers beyond
// 2^53 lose precision, underflow becomes 0, overflow is refused.
func Canonicalize(raw []byte) ([]byte, error) {
	n, err := parse(raw)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes(), nil
}

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a parsed JSON value. Objects keep their members in input order;
// only serialisation sorts them.
type node struct {
	kind kind
	b    bool
	num  float64
	str  string
	arr  []*node
	obj  []member
}

type member struct {
	key string
	val *node
}

// get returns the member named key, or nil.
func (n *node) get(key string) *node {
	for _, m := range n.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// parse checks raw and builds its tree. The standard library validates the
// syntax; the token stream then gives us keys one by one so duplicates and
// depth can be checked, which json.Unmarshal into a map would hide.
func parse(raw []byte) (*node, error) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return nil, ErrInvalidJSON
	}
	if err := checkSurrogates(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, ErrInvalidJSON
	}
	n, err := parseValue(dec, tok, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data", ErrInvalidJSON)
	}
	return n, nil
}

func parseValue(dec *json.Decoder, tok json.Token, depth int) (*node, error) {
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool, b: t}, nil
	case string:
		return &node{kind: kindString, str: t}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%w at offset %d", ErrNumberRange, dec.InputOffset())
		}
		return &node{kind: kindNumber, num: f}, nil
	case json.Delim:
		if depth+1 > MaxJSONDepth {
			return nil, fmt.Errorf("%w (limit %d)", ErrTooDeep, MaxJSONDepth)
		}
		switch t {
		case '[':
			return parseArray(dec, depth+1)
		case '{':
			return parseObject(dec, depth+1)
		}
	}
	return nil, ErrInvalidJSON
}

func parseArray(dec *json.Decoder, depth int) (*node, error) {
	n := &node{kind: kindArray}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, ErrInvalidJSON
		}
		if d, ok := tok.(json.Delim); ok && d == ']' {
			return n, nil
		}
		v, err := parseValue(dec, tok, depth)
		if err != nil {
			return nil, err
		}
		n.arr = append(n.arr, v)
	}
}

func parseObject(dec *json.Decoder, depth int) (*node, error) {
	n := &node{kind: kindObject}
	seen := map[string]struct{}{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, ErrInvalidJSON
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return n, nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil, ErrInvalidJSON
		}
		if _, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w at offset %d", ErrDuplicateKey, dec.InputOffset())
		}
		seen[key] = struct{}{}
		tok, err = dec.Token()
		if err != nil {
			return nil, ErrInvalidJSON
		}
		v, err := parseValue(dec, tok, depth)
		if err != nil {
			return nil, err
		}
		n.obj = append(n.obj, member{key: key, val: v})
	}
}

// checkSurrogates refuses \u escapes that do not form a valid UTF-16
// surrogate pair. encoding/json would silently turn them into U+FFFD, so
// "\ud800" and "\udc00" would canonicalise (and hash) alike. raw is already
// known to be valid JSON, so every backslash starts an escape in a string.
func checkSurrogates(raw []byte) error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r := hex4(raw[i+2 : i+6])
		i += 5
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
			}
			lo := hex4(raw[i+3 : i+7])
			if lo < 0xdc00 || lo > 0xdfff {
				return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
			}
			i += 6
		case utf16.IsSurrogate(r):
			return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
		}
	}
	return nil
}

func hex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b), 16, 16)
	return rune(v)
}

func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(n.b))
	case kindNumber:
		b.WriteString(formatNumber(n.num))
	case kindString:
		writeString(b, n.str)
	case kindArray:
		b.WriteByte('[')
		for i, v := range n.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	case kindObject:
		members := make([]member, len(n.obj))
		copy(members, n.obj)
		sortMembers(members)
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			m.val.write(b)
		}
		b.WriteByte('}')
	}
}

// sortMembers orders by UTF-16 code units, as RFC 8785 section 3.2.3 asks;
// Go's byte order differs from it for characters above U+FFFF versus
// U+E000–U+FFFF.
func sortMembers(ms []member) {
	keys := make(map[string][]uint16, len(ms))
	for _, m := range ms {
		keys[m.key] = utf16.Encode([]rune(m.key))
	}
	sort.Slice(ms, func(i, j int) bool {
		a, b := keys[ms[i].key], keys[ms[j].key]
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
}

// writeString escapes only what RFC 8785 section 3.2.2.2 requires: the
// quote, the backslash and control characters. HTML characters, U+2028 and
// U+2029 stay literal, unlike encoding/json's default.
func writeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// formatNumber is ECMAScript's Number::toString (ECMA-262 section
// 6.1.6.1.20) as RFC 8785 section 3.2.2.3 prescribes: the shortest digits
// that round-trip, plain notation for exponents from -6 to 20, otherwise
// d.ddde±x. -0 becomes 0.
func formatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits: d.dddde±XX.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k := len(digits)
	n := exp + 1 // ECMAScript's n: the decimal point sits after n digits.
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		e := n - 1
		es := "+"
		if e < 0 {
			es = "-"
			e = -e
		}
		out = digits[:1]
		if k > 1 {
			out += "." + digits[1:]
		}
		out += "e" + es + strconv.Itoa(e)
	}
	return sign + out
}
