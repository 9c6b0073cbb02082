package poison

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Padding: visible text after minBlankLines blank lines, or after
// minSpaces horizontal spaces in a row.
const (
	minBlankLines = 5
	minSpaces     = 40
)

// padding reports visible text that follows a run of blank lines or of
// spaces (any Unicode space: U+00A0, U+2000–U+200A, U+3000…) long
// enough to push it out of view. White space at the end is not.
func (s *scan) padding(v view) (string, bool) {
	newlines, spaces, start := 0, 0, -1
	for i, r := range v.raw {
		switch {
		case r == '\n':
			newlines++
			spaces = 0
		case unicode.IsSpace(r) || r == '\u2800' || r == '\u3164' || r == '\u115f' || r == '\u1160' || r == '\uffa0':
			spaces++
		case isInvisibleNoBreak(r):
		default:
			if newlines > minBlankLines || spaces >= minSpaces {
				return s.excerpt(v, "[white space ×"+strconv.Itoa(utf8.RuneCountInString(v.raw[start:i]))+"] "+window(v.raw[i:], 0)), true
			}
			newlines, spaces = 0, 0
			start = -1
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return "", false
}

// isInvisibleNoBreak: zero-width characters inside a run do not end it.
func isInvisibleNoBreak(r rune) bool {
	return r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff'
}
