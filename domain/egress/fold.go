package egress

import (
	"strings"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/codelotse/codelotse/domain/tool"
)

// Fold is the form in which collected values and arguments are compared:
// NFKC, lower case, the confusable skeleton of UTS #39 (a Cyrillic "а" is
// an "a", "m" is "rn", "0" is "o", "1" is "l") and lower case again,
// keeping only the ASCII letters and digits, with "i" read as "l" (the
// skeleton makes "I", "1" and "|" an "l" but leaves "i" alone, so a
// case-blind fold must join them). So invisible and format characters, separators (spaces, dots,
// dashes, underscores, quotes) and case are gone, and a look-alike letter
// is the letter it imitates. Non-Latin letters without a Latin skeleton are
// dropped too: the values the check protects are ASCII.
func Fold(s string) []byte {
	out := make([]byte, 0, len(s))
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		s = norm.NFKC.String(s)
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			out = append(out, asciiFold[r]...)
		case tool.Invisible(r):
		default:
			out = appendKept(out, skeleton(r))
		}
	}
	return out
}

// asciiFold is Fold of each ASCII character, worked out once: the
// skeleton maps a few of them too ("m" is "rn", "1" and "I" are "l").
var asciiFold = func() (t [utf8.RuneSelf][]byte) {
	for r := range t {
		t[r] = appendKept(nil, skeleton(rune(r)))
	}
	return t
}()

// skeleton is r's lower-case skeleton.
func skeleton(r rune) string {
	return strings.ToLower(confusables.Skeleton(strings.ToLower(string(r))))
}

// appendKept appends the ASCII letters and digits of s, "i" as "l".
func appendKept(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'i':
			out = append(out, 'l')
		case code[c] != 0:
			out = append(out, c)
		}
	}
	return out
}

// code numbers the folded alphabet from 1 (a–z are 1–26, 0–9 are 27–36),
// six bits a character; 0 is a byte Fold never keeps.
var code = func() (t [256]uint64) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = uint64(c-'a') + 1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint64(c-'0') + 27
	}
	return t
}()
