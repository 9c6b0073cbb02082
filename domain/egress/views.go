package egress

import (
	"encoding/ascii85"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Bounds of the views of one call: an argument that unfolds into more
// is blocked (ErrTooManyViews), never read in part.
const (
	// MaxDepth is how many decodings are nested (base64 of hex of …).
	MaxDepth = 3
	// MaxViews is how many texts one call's arguments unfold into, the
	// roots included.
	MaxViews = 64
	// MaxViewBytes caps the bytes of all views of one call together.
	MaxViewBytes = 128 << 10
)

// ErrTooManyViews: the arguments unfold into more views, or more bytes,
// than the check reads. The call is blocked (fail closed).
var ErrTooManyViews = errors.New("egress: the arguments unfold into more views than the check reads")

// decoder is one family of reversible encodings. decode returns the text
// with every part it can decode replaced by what it stands for, and
// whether anything was decoded.
type decoder struct {
	name   string
	decode func(string) (string, bool)
}

// decoders apply when the text holds their encoding; the first four
// (the alphabet encodings and hex) are tried under the transforms too.
var decoders = []decoder{
	{"base64", decodeBase64},
	{"base32", decodeBase32},
	{"base85", decodeBase85},
	{"hex", decodeHex},
	{"percent", decodePercent},
	{"entities", decodeEntities},
	{"escapes", decodeEscapes},
	{"quoted-printable", decodeQuotedPrintable},
}

// transforms apply to any root; their result is kept only when one of
// the first four decoders then applies to it (rot13 of base64, base64 or
// hex reversed). rot47 needs none: every root is read under it
// (Views). Rotations, reversal and interleaving of the plain text are
// read by the matcher (taint.go), not as views.
var transforms = []decoder{
	{"rot13", func(s string) (string, bool) { return rotate(s, 13, 'a', 26), true }},
	{"reverse", func(s string) (string, bool) { return reverse(s), true }},
}

// Views returns the texts the check reads for one call: the roots, then
// every decoding of them down to MaxDepth, each text once, shallow ones
// first. ErrTooManyViews when they pass MaxViews or MaxViewBytes.
func Views(roots []string) ([]string, error) {
	type item struct {
		text  string
		depth int
	}
	seen := map[string]bool{}
	var (
		out   []string
		queue []item
		size  int
	)
	add := func(s string, depth int) error {
		if seen[s] {
			return nil
		}
		seen[s] = true
		size += len(s)
		if len(out) == MaxViews || size > MaxViewBytes {
			return ErrTooManyViews
		}
		out = append(out, s)
		queue = append(queue, item{s, depth})
		return nil
	}
	for _, r := range roots {
		if err := add(r, 0); err != nil {
			return nil, err
		}
	}
	// rot47 turns letters, digits and signs alike, which the matcher's
	// letter rotations do not read: each root is read under it too.
	for _, r := range roots {
		if err := add(rotate(r, 47, '!', 94), 1); err != nil {
			return nil, err
		}
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if it.depth >= MaxDepth {
			continue
		}
		for _, d := range decoders {
			if v, ok := d.decode(it.text); ok {
				if err := add(v, it.depth+1); err != nil {
					return nil, err
				}
			}
		}
		for _, t := range transforms {
			if it.depth > 0 {
				break // transforms apply to the roots only
			}
			v, _ := t.decode(it.text)
			if seen[v] {
				continue
			}
			for _, d := range decoders[:4] {
				if w, ok := d.decode(v); ok {
					if err := add(w, it.depth+2); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return out, nil
}

// class is a set of bytes.
type class [256]bool

func newClass(ranges ...string) *class {
	var c class
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for b := int(r[0]); b <= int(r[2]); b++ {
				c[b] = true
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			c[r[i]] = true
		}
	}
	return &c
}

var (
	base64Class  = newClass("A-Z", "a-z", "0-9", "+/_-")
	base32Class  = newClass("A-Z", "a-z", "2-7")
	ascii85Class = newClass("!-u")
	base85Class  = newClass("A-Z", "a-z", "0-9", ".-:+=^!/*?&<>()[]{}@%$#;_`|~")
	hexClass     = newClass("0-9", "a-f", "A-F", "xX\\ :,-")
	hexDigits    = newClass("0-9", "a-f", "A-F")
)

// decodeRuns replaces each maximal run of bytes of c, at least minLen
// long, that dec turns into text (asText). pad is a byte a run may end
// with up to six of (base64's and base32's "=").
func decodeRuns(s string, c *class, minLen int, pad byte, dec func(string) ([]byte, bool)) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	for i := 0; i < len(s); {
		if !c[s[i]] {
			i++
			continue
		}
		j := i
		for j < len(s) && c[s[j]] {
			j++
		}
		for n := 0; pad != 0 && n < 6 && j < len(s) && s[j] == pad; n++ {
			j++
		}
		if j-i >= minLen {
			if d, ok := dec(s[i:j]); ok && asText(&d) {
				b.WriteString(s[last:i])
				b.Write(d)
				last = j
				changed = true
			}
		}
		i = j
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// asText turns decoded bytes into the text they hold, and reports
// whether they hold text at all: UTF-16 (every other byte zero) is read
// as its characters, and at most one character in sixteen (at least one)
// may be other than graphic or white space; those become spaces (a NUL
// or a stray byte beside a secret does not hide it). Random bytes (an
// ordinary word read as base64) almost never pass.
func asText(b *[]byte) bool {
	d := *b
	if len(d) >= 4 && len(d)%2 == 0 {
		for off, zero := range []int{1, 0} { // little-endian, big-endian
			if zeroesAt(d, zero) {
				half := make([]byte, len(d)/2)
				for i := range half {
					half[i] = d[2*i+off]
				}
				d = half
				break
			}
		}
	}
	good, all := 0, 0
	text := []byte(strings.Map(func(r rune) rune {
		all++
		if r != utf8.RuneError && (unicode.IsGraphic(r) || r == '\n' || r == '\t' || r == '\r') {
			good++
			return r
		}
		return ' '
	}, string(d)))
	*b = text
	return all > 0 && all-good <= max(1, all/16)
}

// zeroesAt reports whether every second byte of d from off on is zero.
func zeroesAt(d []byte, off int) bool {
	for i := off; i < len(d); i += 2 {
		if d[i] != 0 {
			return false
		}
	}
	return true
}

// groupsStartIn reports whether at least three quarters of the groups
// of n characters of an encoding start with one of first: the digits
// that can stand for a first byte of printable ASCII or a NUL (base64:
// "I" to "f" and "A"; base32: "E" to "P" and "A"). An ordinary word almost never passes, so it
// is not decoded.
func groupsStartIn(s string, n int, first *class) bool {
	good, all := 0, 0
	for i := 0; i < len(s) && s[i] != '='; i += n {
		all++
		if first[s[i]] {
			good++
		}
	}
	return 4*good >= 3*all
}

var (
	base64First = newClass("I-Z", "a-f", "A") // "A": a NUL, as in UTF-16
	base32First = newClass("E-P", "A")
)

var urlSafe = strings.NewReplacer("-", "+", "_", "/")

// decodeBase64 reads standard and URL-safe base64, padded or not, run by
// run, and the whole text when white space splits one encoding.
func decodeBase64(s string) (string, bool) {
	dec := func(tok string) ([]byte, bool) {
		if !groupsStartIn(tok, 4, base64First) {
			return nil, false
		}
		t := urlSafe.Replace(strings.TrimRight(tok, "="))
		if len(t)%4 == 1 {
			t = t[:len(t)-1]
		}
		b, err := base64.RawStdEncoding.DecodeString(t)
		return b, err == nil
	}
	if out, ok := decodeRuns(s, base64Class, 8, '=', dec); ok {
		return out, true
	}
	return decodeJoined(s, base64Class, dec)
}

// decodeJoined decodes s with its separators removed, when it holds
// nothing but the bytes of c and separators (white space and signs that
// c does not use): an encoding spaced out, dotted, broken over lines or
// cut anywhere.
func decodeJoined(s string, c *class, dec func(string) ([]byte, bool)) (string, bool) {
	var joined []byte
	parts := 0
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case c[b] || b == '=':
			if len(joined) == 0 || !c[s[i-1]] && s[i-1] != '=' {
				parts++
			}
			joined = append(joined, b)
		case b >= utf8.RuneSelf || asciiFold[b] != 0:
			return s, false // a letter or digit c does not use: not this encoding
		}
	}
	if parts < 2 || len(joined) < 8 {
		return s, false
	}
	if b, ok := dec(string(joined)); ok && asText(&b) {
		return string(b), true
	}
	return s, false
}

// decodeBase32 reads RFC 4648 base32 in either case, padded or not.
func decodeBase32(s string) (string, bool) {
	dec := func(tok string) ([]byte, bool) {
		if !groupsStartIn(strings.ToUpper(tok), 8, base32First) {
			return nil, false
		}
		b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(tok, "=")))
		return b, err == nil
	}
	if out, ok := decodeRuns(s, base32Class, 16, '=', dec); ok {
		return out, true
	}
	return decodeJoined(s, base32Class, dec)
}

// The base85 alphabets: Ascii85 (btoa, Adobe; "!" to "u"), Z85 and
// RFC 1924 (git's binary patches).
const (
	z85Alphabet     = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
	rfc1924Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
)

var (
	ascii85Table = base85Table(ascii85Alphabet())
	z85Table     = base85Table(z85Alphabet)
	rfc1924Table = base85Table(rfc1924Alphabet)
)

// decodeBase85 reads Ascii85 (with or without <~ ~>), Z85 and RFC 1924.
func decodeBase85(s string) (string, bool) {
	out, a := decodeRuns(s, ascii85Class, 10, 0, func(tok string) ([]byte, bool) {
		tok = strings.TrimSuffix(strings.TrimPrefix(tok, "<~"), "~>")
		if !textGroups(tok, &ascii85Table) {
			return nil, false
		}
		dst := make([]byte, 4*len(tok)/5+4)
		n, _, err := ascii85.Decode(dst, []byte(tok), true)
		return dst[:n], err == nil
	})
	out, b := decodeRuns(out, base85Class, 10, 0, func(tok string) ([]byte, bool) {
		for _, table := range []*[256]int8{&z85Table, &rfc1924Table} {
			if !textGroups(tok, table) {
				continue
			}
			if b, ok := decode85(tok, table); ok && asText(&b) {
				return b, true
			}
		}
		return nil, false
	})
	return out, a || b
}

func ascii85Alphabet() string {
	b := make([]byte, 85)
	for i := range b {
		b[i] = byte('!' + i)
	}
	return string(b)
}

func base85Table(alphabet string) (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = int8(i)
	}
	return t
}

// textGroups reports whether at least three quarters of the five-digit
// groups of s can stand for four bytes of printable ASCII (0x20202020 to
// 0x7E7E7E7E): their first digit is then 10 to 40. An ordinary word
// almost never passes.
func textGroups(s string, table *[256]int8) bool {
	good, all := 0, 0
	for i := 0; i+5 <= len(s); i += 5 {
		all++
		if d := table[s[i]]; d >= 10 && d <= 40 {
			good++
		}
	}
	return 4*good >= 3*all
}

// decode85 decodes big-endian groups of five digits into four bytes; a
// short last group is padded with the highest digit, as Ascii85 does.
func decode85(s string, table *[256]int8) ([]byte, bool) {
	out := make([]byte, 0, len(s)*4/5+4)
	for i := 0; i < len(s); i += 5 {
		group := s[i:min(i+5, len(s))]
		if len(group) == 1 {
			return nil, false
		}
		var v uint64
		for j := 0; j < 5; j++ {
			d := int8(84)
			if j < len(group) {
				if d = table[group[j]]; d < 0 {
					return nil, false
				}
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, false
		}
		b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		out = append(out, b[:len(group)-1]...)
	}
	return out, true
}

var hexNoise = strings.NewReplacer("0x", "", "0X", "", `\x`, "", `\X`, "", " ", "", ":", "", ",", "", "-", "")

// decodeHex reads hex in its spellings: plain, 0x- or \x-prefixed,
// spaced, dashed or colon-separated pairs. A run that does not decode
// whole is read word by word, so a hex word next to an encoding ("cafe
// 41 4b …") does not hide it.
func decodeHex(s string) (string, bool) {
	dec := func(tok string) ([]byte, bool) {
		if !hexText(tok) {
			return nil, false
		}
		digits := hexNoise.Replace(tok)
		if len(digits) < 8 {
			return nil, false
		}
		b, err := hex.DecodeString(digits)
		return b, err == nil
	}
	if out, ok := decodeRuns(s, hexClass, 8, 0, func(tok string) ([]byte, bool) {
		if !hexText(tok) {
			return nil, false
		}
		if b, ok := dec(tok); ok && asText(&b) {
			return b, true
		}
		return hexWords(tok, dec)
	}); ok {
		return out, true
	}
	return decodeJoined(s, hexDigits, dec)
}

// hexText reports a run that can be the hex of text: every printable
// ASCII character is two digits of which the first is 2 to 7, so such a
// run has at least as many decimal digits as letters.
func hexText(tok string) bool {
	digits, hexes := 0, 0
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case c >= '0' && c <= '9':
			digits++
			hexes++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hexes++
		}
	}
	return hexes >= 8 && 2*digits >= hexes
}

// hexWords decodes a run word by word: each word of eight or more digits
// alone, and each stretch of four or more two-digit words together.
func hexWords(tok string, dec func(string) ([]byte, bool)) ([]byte, bool) {
	var (
		out     []string
		pairs   []string
		changed bool
	)
	flush := func() {
		if b, ok := dec(strings.Join(pairs, "")); ok && len(pairs) >= 4 && asText(&b) {
			out = append(out, string(b))
			changed = true
		} else {
			out = append(out, pairs...)
		}
		pairs = nil
	}
	for _, w := range strings.Fields(tok) {
		if len(hexNoise.Replace(w)) == 2 {
			pairs = append(pairs, w)
			continue
		}
		flush()
		if b, ok := dec(w); ok && asText(&b) {
			w, changed = string(b), true
		}
		out = append(out, w)
	}
	flush()
	return []byte(strings.Join(out, " ")), changed
}

// unescape replaces each escape in s that starts with marker and that
// read recognises: read returns the bytes it stands for and its length,
// or a length of 0. Nothing is copied until an escape is found.
func unescape(s string, marker byte, read func(string) ([]byte, int)) (string, bool) {
	var out []byte
	last := 0
	for i := strings.IndexByte(s, marker); i >= 0 && i < len(s); {
		if v, n := read(s[i:]); n > 0 {
			if out == nil {
				out = make([]byte, 0, len(s))
			}
			out = append(append(out, s[last:i]...), v...)
			last, i = i+n, i+n
		} else {
			i++
		}
		j := strings.IndexByte(s[i:], marker)
		if j < 0 {
			break
		}
		i += j
	}
	if out == nil {
		return s, false
	}
	return string(append(out, s[last:]...)), true
}

// hexByte reads two hex digits.
func hexByte(s string) (byte, bool) {
	if len(s) < 2 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:2], 16, 8)
	return byte(v), err == nil
}

// decodePercent replaces every %XX.
func decodePercent(s string) (string, bool) {
	return unescape(s, '%', func(e string) ([]byte, int) {
		if v, ok := hexByte(e[1:]); ok {
			return []byte{v}, 3
		}
		return nil, 0
	})
}

// decodeEntities reads HTML and XML character references, named and
// numeric.
func decodeEntities(s string) (string, bool) {
	if !strings.Contains(s, "&") {
		return s, false
	}
	out := html.UnescapeString(s)
	return out, out != s
}

// decodeQuotedPrintable replaces =XX and drops soft line breaks.
func decodeQuotedPrintable(s string) (string, bool) {
	return unescape(s, '=', func(e string) ([]byte, int) {
		switch {
		case strings.HasPrefix(e, "=\n"):
			return nil, 2
		case strings.HasPrefix(e, "=\r\n"):
			return nil, 3
		}
		if v, ok := hexByte(e[1:]); ok {
			return []byte{v}, 3
		}
		return nil, 0
	})
}

// simpleEscapes are the one-letter backslash escapes of JSON and
// JavaScript.
var simpleEscapes = map[byte]byte{'"': '"', '\'': '\'', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// decodeEscapes reads JSON and JavaScript string escapes (\n, \uXXXX
// with surrogate pairs, \u{X…}, \xXX) and octal escapes (\101), wherever
// they stand.
func decodeEscapes(s string) (string, bool) {
	return unescape(s, '\\', func(e string) ([]byte, int) {
		if len(e) < 2 {
			return nil, 0
		}
		r, n := escapeAt(e[1:])
		if n == 0 {
			return nil, 0
		}
		if utf16.IsSurrogate(r) && strings.HasPrefix(e[1+n:], `\u`) {
			if r2, n2 := escapeAt(e[2+n:]); n2 > 0 {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r, n = dec, n+1+n2
				}
			}
		}
		return utf8.AppendRune(nil, r), 1 + n
	})
}

// escapeAt reads one escape after its backslash: the character and how
// many bytes it took, or 0 when s starts no escape.
func escapeAt(s string) (rune, int) {
	if r, ok := simpleEscapes[s[0]]; ok {
		return rune(r), 1
	}
	switch {
	case s[0] == 'u' && len(s) > 2 && s[1] == '{':
		if end := strings.IndexByte(s, '}'); end > 2 && end <= 8 {
			if r, ok := escapeNum(s[2:end], 16); ok {
				return r, end + 1
			}
		}
	case s[0] == 'u' && len(s) >= 5:
		if r, ok := escapeNum(s[1:5], 16); ok {
			return r, 5
		}
	case s[0] == 'x' && len(s) >= 3:
		if r, ok := escapeNum(s[1:3], 16); ok {
			return r, 3
		}
	case s[0] >= '0' && s[0] <= '7':
		return octalEscape(s)
	}
	return 0, 0
}

// escapeNum reads an escape's digits in base: a character, if it is one.
func escapeNum(digits string, base int) (rune, bool) {
	v, err := strconv.ParseUint(digits, base, 32)
	return rune(v), err == nil && v <= unicode.MaxRune
}

// octalEscape reads one to three octal digits standing for a byte.
func octalEscape(s string) (rune, int) {
	n := 1
	for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
		n++
	}
	if r, ok := escapeNum(s[:n], 8); ok && r < 256 {
		return r, n
	}
	return 0, 0
}

// rotate shifts the n characters from first on by k, both cases when
// first is 'a' (rot13), the printable ASCII when it is '!' (rot47).
func rotate(s string, k int, first byte, n int) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= first && int(c) < int(first)+n:
			b[i] = first + byte((int(c-first)+k)%n)
		case first == 'a' && c >= 'A' && c <= 'Z':
			b[i] = 'A' + byte((int(c-'A')+k)%n)
		}
	}
	return string(b)
}

// reverse reverses s character by character.
func reverse(s string) string {
	if isASCII(s) {
		b := make([]byte, len(s))
		for i := 0; i < len(s); i++ {
			b[len(s)-1-i] = s[i]
		}
		return string(b)
	}
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
