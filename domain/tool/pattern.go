package tool

import (
	"regexp"
	"strconv"
	"strings"
)

// A schema's "pattern" is an ECMA-262 regular expression (JSON Schema
// 2020-12, section 6.4), written by a generator from the server author's
// JavaScript RegExp, Python regex or Go string. It is enforced here with
// Go's regexp (RE2: linear time, no backtracking), so only the part of
// ECMA-262 that Go reads with the same meaning is accepted; every other
// construct makes the schema unsupported, with the construct named.
//
// The translation, construct by construct:
//
//   - "." matches any character but the ECMA line terminators
//     (\n, \r, U+2028, U+2029); Go's "." only excludes \n, so it becomes
//     a class;
//   - \s and \S are ECMA's white space and line terminators (Unicode
//     spaces included), Go's \s is ASCII only, so they become classes;
//     \S inside a class is refused (Go cannot subtract it there);
//   - \d \D \w \W \b \B, \t \n \r \f \v, ^ $ | ( ) (?: ), quantifiers
//     with their lazy forms, and classes [ … ] [^ … ] mean the same in
//     both and are copied;
//   - \xHH and \uHHHH become \x{…}; \0 not followed by a digit is NUL;
//     \ before ASCII punctuation is that character;
//   - (?<name> … ) becomes Go's named group;
//   - a "{" or "}" that does not open a valid quantifier is a literal in
//     ECMA's web-compatibility grammar, so it is escaped.
//
// Lookaheads that open the pattern, right after its "^" ("^(?=…)(?!…)rest",
// the form of password rules and of the e-mail and hostname patterns zod
// writes) are read exactly: at position 0 each positive lookahead must
// match, each negative one must not, and "^rest" must match; the
// lookaheads' bodies follow the rules here. A pattern whose rest has an
// alternation at its top level is refused, since "|" would bind looser
// than the lookaheads.
//
// Refused: any other lookahead, lookbehind, backreferences (\1, \k<…>), inline
// flags and modifiers, Unicode property escapes (\p{…}: their meaning
// depends on the u flag the schema does not carry), \c, \u{…}, surrogate
// escapes, an empty class [] or [^] (Go reads "[]a]" as a class), POSIX
// classes "[[:alpha:]]" (a class of characters in ECMA), letter escapes
// without a meaning in both (\a, \z, \A, \Q…), and anything Go's
// compiler refuses (repetition above 1000, nested repetition).
//
// One difference is accepted and documented (docs/schemas.md): without
// the u flag, ECMA counts a character above U+FFFF as two UTF-16 code
// units, Go as one character; so "^.$" matches "😀" here and not in a
// browser's RegExp. It can only change whether such an argument is sent,
// never what is sent.

// ecmaSpace is the body of ECMA-262's \s class: WhiteSpace and
// LineTerminator.
const ecmaSpace = `\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`

// ecmaDot is ECMA's "." without the s flag.
const ecmaDot = `[^\n\r\x{2028}\x{2029}]`

// ecmaPattern is a compiled pattern: main must match, and each of must
// and none of mustNot (the leading lookaheads, anchored at 0).
type ecmaPattern struct {
	src           string
	main          *regexp.Regexp
	must, mustNot []*regexp.Regexp
}

// MatchString reports whether s holds a match of the pattern.
func (e *ecmaPattern) MatchString(s string) bool {
	for _, re := range e.must {
		if !re.MatchString(s) {
			return false
		}
	}
	for _, re := range e.mustNot {
		if re.MatchString(s) {
			return false
		}
	}
	return e.main.MatchString(s)
}

// String is the ECMA-262 source.
func (e *ecmaPattern) String() string { return e.src }

// compileECMAPattern translates an ECMA-262 pattern and compiles it;
// why says what was refused ("" when it compiled).
func compileECMAPattern(src string) (*ecmaPattern, string) {
	rest, heads, why := splitLookaheads(src)
	if why != "" {
		return nil, why
	}
	e := &ecmaPattern{src: src}
	if e.main, why = compileTranslated(rest); why != "" {
		return nil, why
	}
	for _, h := range heads {
		re, why := compileTranslated("^(?:" + h.body + ")")
		if why != "" {
			return nil, why
		}
		if h.negative {
			e.mustNot = append(e.mustNot, re)
		} else {
			e.must = append(e.must, re)
		}
	}
	return e, ""
}

func compileTranslated(src string) (*regexp.Regexp, string) {
	goSrc, why := translatePattern(src)
	if why != "" {
		return nil, why
	}
	re, err := regexp.Compile(goSrc)
	if err != nil {
		return nil, "does not compile"
	}
	return re, ""
}

// lookahead is one leading (?=body) or (?!body).
type lookahead struct {
	body     string
	negative bool
}

// splitLookaheads takes the lookaheads that follow a leading "^" off the
// pattern and returns "^" and the rest. A pattern without them is
// returned as it is.
func splitLookaheads(src string) (string, []lookahead, string) {
	i := 1
	var heads []lookahead
	for strings.HasPrefix(src, "^") && (strings.HasPrefix(src[i:], "(?=") || strings.HasPrefix(src[i:], "(?!")) {
		end := closingParen(src, i)
		if end < 0 {
			return "", nil, "does not compile"
		}
		heads = append(heads, lookahead{body: src[i+3 : end], negative: src[i+2] == '!'})
		i = end + 1
	}
	if heads == nil {
		return src, nil, ""
	}
	rest := "^" + src[i:]
	if topLevelAlternation(rest) {
		return "", nil, "uses lookaround, inline flags or another (? group"
	}
	return rest, heads, ""
}

// closingParen is the index of the ")" that closes the "(" at open, or -1.
func closingParen(src string, open int) int {
	return scanGroups(src, open, func(i, depth int) bool { return src[i] == ')' && depth == 0 })
}

// topLevelAlternation reports a "|" outside every group and class.
func topLevelAlternation(src string) bool {
	return scanGroups(src, 0, func(i, depth int) bool { return src[i] == '|' && depth == 0 }) >= 0
}

// scanGroups walks src from start, skipping escapes and classes, and
// returns the first index where stop holds, or -1. depth is the group
// depth at that byte: a "(" counts from the byte after it, a ")" from
// itself.
func scanGroups(src string, start int, stop func(i, depth int) bool) int {
	depth, inClass := 0, false
	for i := start; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		default:
			if c == ')' {
				depth--
			}
			if stop(i, depth) {
				return i
			}
			if c == '(' {
				depth++
			}
		}
	}
	return -1
}

// translatePattern rewrites an ECMA-262 pattern in Go's syntax; why says
// what was refused ("" when nothing was).
func translatePattern(src string) (string, string) {
	rs := []rune(src)
	var b strings.Builder
	inClass := false
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\':
			if i+1 == len(rs) {
				return "", "ends with a backslash"
			}
			i++
			out, skip, why := translateEscape(rs, i, inClass)
			if why != "" {
				return "", why
			}
			b.WriteString(out)
			i += skip
		case inClass:
			out, why := translateClassChar(rs, i)
			if why != "" {
				return "", why
			}
			b.WriteString(out)
			inClass = c != ']'
		case c == '[':
			inClass = true
			b.WriteRune(c)
			if i+1 < len(rs) && rs[i+1] == '^' {
				b.WriteRune('^')
				i++
			}
			if i+1 < len(rs) && rs[i+1] == ']' {
				return "", "uses an empty class"
			}
		case c == '.':
			b.WriteString(ecmaDot)
		case c == '(':
			out, skip, why := translateGroup(rs, i)
			if why != "" {
				return "", why
			}
			b.WriteString(out)
			i += skip
		case c == '{', c == '}':
			out, skip := translateBrace(rs, i)
			b.WriteString(out)
			i += skip
		default:
			b.WriteRune(c)
		}
	}
	if inClass {
		return "", "has an unterminated class"
	}
	return b.String(), ""
}

// translateClassChar translates rs[i], a character inside a class that is
// not a backslash: "[" is escaped, and refused when it opens a POSIX
// class.
func translateClassChar(rs []rune, i int) (string, string) {
	if rs[i] != '[' {
		return string(rs[i]), ""
	}
	if i+1 < len(rs) && strings.ContainsRune(":.=", rs[i+1]) {
		return "", "uses a POSIX class"
	}
	return `\[`, ""
}

// translateBrace translates the "{" or "}" at rs[i] outside a class: a
// quantifier is copied (skip is how many runes after rs[i] it holds),
// any other brace is a literal and escaped.
func translateBrace(rs []rune, i int) (string, int) {
	if rs[i] == '{' {
		if n := quantifierLen(rs[i:]); n > 0 {
			return string(rs[i : i+n]), n - 1
		}
	}
	return `\` + string(rs[i]), 0
}

// translateEscape translates the escape whose letter is rs[i]; skip is
// how many runes after it were consumed too.
func translateEscape(rs []rune, i int, inClass bool) (out string, skip int, why string) {
	e := rs[i]
	switch e {
	case 'd', 'D', 'w', 'W', 't', 'n', 'r', 'f', 'v':
		return `\` + string(e), 0, ""
	case 'b', 'B':
		if inClass {
			return "", 0, `uses \b inside a class`
		}
		return `\` + string(e), 0, ""
	case 's':
		if inClass {
			return ecmaSpace, 0, ""
		}
		return "[" + ecmaSpace + "]", 0, ""
	case 'S':
		if inClass {
			return "", 0, `uses \S inside a class`
		}
		return "[^" + ecmaSpace + "]", 0, ""
	case '0':
		if i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9' {
			return "", 0, "uses an octal escape"
		}
		return `\x00`, 0, ""
	case '1', '2', '3', '4', '5', '6', '7', '8', '9', 'k':
		return "", 0, "uses a backreference"
	case 'p', 'P':
		return "", 0, "uses a Unicode property escape"
	case 'x':
		return hexEscape(rs, i, 2)
	case 'u':
		if i+1 < len(rs) && rs[i+1] == '{' {
			return "", 0, `uses a \u{…} escape`
		}
		return hexEscape(rs, i, 4)
	}
	if e < 0x80 && strings.ContainsRune(`^$\.*+?()[]{}|/-,:=!<>'"#%&~@;`+"`", e) {
		return `\` + string(e), 0, ""
	}
	return "", 0, "uses an escape that differs between ECMA-262 and Go"
}

// hexEscape reads n hex digits after rs[i] and writes \x{…}; surrogates
// are refused (they would be half a character).
func hexEscape(rs []rune, i, n int) (string, int, string) {
	if i+n >= len(rs) {
		return "", 0, "has a short hex escape"
	}
	v, err := strconv.ParseUint(string(rs[i+1:i+1+n]), 16, 32)
	if err != nil {
		return "", 0, "has a malformed hex escape"
	}
	if v >= 0xd800 && v <= 0xdfff {
		return "", 0, "uses a surrogate escape"
	}
	return `\x{` + strconv.FormatUint(v, 16) + `}`, n, ""
}

// translateGroup translates the group opened at rs[i]: plain, (?: or a
// named group; everything else after "(?" is refused.
func translateGroup(rs []rune, i int) (string, int, string) {
	if i+1 >= len(rs) || rs[i+1] != '?' {
		return "(", 0, ""
	}
	if i+2 < len(rs) && rs[i+2] == ':' {
		return "(?:", 2, ""
	}
	if i+2 < len(rs) && rs[i+2] == '<' && i+3 < len(rs) && rs[i+3] != '=' && rs[i+3] != '!' {
		return translateNamedGroup(rs, i)
	}
	return "", 0, "uses lookaround, inline flags or another (? group"
}

// translateNamedGroup translates the "(?<name>" opened at rs[i] into Go's
// "(?P<name>"; a name is a letter or "_", then letters, digits or "_".
func translateNamedGroup(rs []rune, i int) (string, int, string) {
	j := i + 3
	for j < len(rs) && rs[j] != '>' {
		c := rs[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > i+3 && c >= '0' && c <= '9') {
			return "", 0, "has a malformed group name"
		}
		j++
	}
	if j == len(rs) || j == i+3 {
		return "", 0, "has a malformed group name"
	}
	return "(?P<" + string(rs[i+3:j]) + ">", j - i, ""
}

// quantifierLen is the length of a quantifier {n}, {n,} or {n,m} at the
// start of rs, or 0 when "{" is a literal there.
func quantifierLen(rs []rune) int {
	j := 1
	digits := func() int {
		k := j
		for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
			j++
		}
		return j - k
	}
	if digits() == 0 {
		return 0
	}
	if j < len(rs) && rs[j] == ',' {
		j++
		digits()
	}
	if j < len(rs) && rs[j] == '}' {
		return j + 1
	}
	return 0
}
