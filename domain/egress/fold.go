package egress

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/codelotse/codelotse/domain/tool"
)

// Fold is the form in which collected values and arguments are compared:
// NFKC; Unicode tag characters read as the ASCII they mirror (ASCII
// smuggling); other invisible and format characters dropped; a non-ASCII
// letter replaced by its confusable skeleton of UTS #39 (a Cyrillic "а"
// is an "a"); lower case; only the ASCII letters and digits kept, with
// "i", "1" and "l" one letter and "0" and "o" another (the skeleton's
// look-alikes within ASCII). Each ASCII character folds to at most one,
// so an ASCII value's folded positions are its characters.
func Fold(s string) []byte {
	out := make([]byte, 0, len(s))
	if !isASCII(s) {
		s = norm.NFKC.String(s)
	}
	for _, r := range s {
		r = Untag(r)
		switch {
		case r < utf8.RuneSelf:
			if c := asciiFold[r]; c != 0 {
				out = append(out, c)
			}
		case tool.Invisible(r):
		default:
			out = appendSkeleton(out, r)
		}
	}
	return out
}

// appendSkeleton appends the folded skeleton of a non-ASCII rune: of
// the rune as it is (a Cyrillic "Т" looks like "T", its "т" like no
// Latin letter), else of its lower case; "rn" is the skeleton's "m".
func appendSkeleton(out []byte, r rune) []byte {
	for _, form := range []string{string(r), strings.ToLower(string(r))} {
		sk := strings.ReplaceAll(strings.ToLower(confusables.Skeleton(form)), "rn", "m")
		n := len(out)
		for i := 0; i < len(sk); i++ {
			if sk[i] < utf8.RuneSelf && asciiFold[sk[i]] != 0 {
				out = append(out, asciiFold[sk[i]])
			}
		}
		if len(out) > n {
			return out
		}
	}
	return out
}

// plain is the form letter rotations are compared in: lower case, the
// ASCII letters and digits only, nothing merged (a rotation moves "i"
// and "l" to different letters).
func plain(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		r = Untag(r)
		if r < utf8.RuneSelf {
			if c := byte(r) | 0x20; c >= 'a' && c <= 'z' {
				out = append(out, c)
			} else if r >= '0' && r <= '9' {
				out = append(out, byte(r))
			}
		}
	}
	return out
}

// Untag reads a Unicode tag character (U+E0020–U+E007E) as the ASCII
// character it mirrors (ASCII smuggling); any other rune is itself.
func Untag(r rune) rune {
	if r >= 0xE0020 && r <= 0xE007E {
		return r - 0xE0000
	}
	return r
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiFold is Fold of each ASCII character, 0 for those it drops.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = byte(c), byte(c)
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	t['i'], t['I'], t['1'] = 'l', 'l', 'l'
	t['0'], t['O'] = 'o', 'o'
	return t
}()

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

// FoldWords is [Fold] that keeps the breaks between words, for matching
// phrases: a run of white space or signs becomes one space (none at the
// ends); invisible and format characters are dropped without a break, so
// "ig\u200bnore" is one word; a letter or digit of a script without a
// Latin skeleton (Chinese) is kept, in lower case; combining marks are
// dropped. Letters and digits fold as in Fold ("i", "1" and "l" one
// letter, "0" and "o" another).
func FoldWords(s string) string {
	out := make([]byte, 0, len(s))
	if !isASCII(s) {
		s = norm.NFKC.String(s)
	}
	var seen map[rune][]byte // skeletons of this text's non-ASCII runes
	gap := false
	for _, r := range s {
		r = Untag(r)
		var add []byte
		switch {
		case r < utf8.RuneSelf && asciiFold[r] != 0:
			add = []byte{asciiFold[r]}
		case tool.Invisible(r) || unicode.Is(unicode.Mn, r):
			continue
		case r < utf8.RuneSelf:
		default:
			if seen == nil {
				seen = map[rune][]byte{}
			}
			sk, ok := seen[r]
			if !ok {
				sk = wordRune(r)
				seen[r] = sk
			}
			add = sk
		}
		if len(add) == 0 {
			gap = len(out) > 0
			continue
		}
		if gap {
			out = append(out, ' ')
			gap = false
		}
		out = append(out, add...)
	}
	return string(out)
}

// wordRune is FoldWords of one non-ASCII rune: its folded skeleton, else
// the letter or digit itself in lower case, else nothing (a break).
func wordRune(r rune) []byte {
	if sk := appendSkeleton(nil, r); len(sk) > 0 {
		return sk
	}
	if unicode.IsLetter(r) || unicode.IsNumber(r) {
		return utf8.AppendRune(nil, unicode.ToLower(r))
	}
	return nil
}
