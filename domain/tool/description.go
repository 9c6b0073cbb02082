package tool

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
)

// SanitizeDescription makes admin text safe to show to the model (MC4):
// invalid UTF-8 becomes U+FFFD; invisible and direction-changing characters
// that could hide instructions from the admin who reviewed the text are
// removed (see invisible); surrounding white space is trimmed; the result is
// capped at [limits.MaxToolDescriptionLen] characters (runes). The function
// is idempotent, so stored text can be sanitised again on every read.
func SanitizeDescription(s string) string {
	s, _ = StripInvisible(strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > limits.MaxToolDescriptionLen {
		s = string([]rune(s)[:limits.MaxToolDescriptionLen])
		s = strings.TrimSpace(s)
	}
	return s
}

// StripInvisible removes every character [Invisible] reports from s and
// returns how many it removed; invalid UTF-8 bytes become U+FFFD, which is
// visible. Its result holds no invisible character, so a second call
// removes nothing. It is the one place both a tool description and a tool
// result (MC3) lose these characters.
func StripInvisible(s string) (string, int) {
	if !needsStrip(s) {
		return s, 0 // nothing to remove or replace: no copy
	}
	n := 0
	s = strings.Map(func(r rune) rune {
		if invisible(r) {
			n++
			return -1
		}
		return r
	}, s)
	return s, n
}

// needsStrip reports whether s holds an invisible character or invalid
// UTF-8, reading ASCII a byte at a time.
func needsStrip(s string) bool {
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plainWord(s[i:i+8]) {
			i += 8 // eight printable ASCII characters, the common case
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			if asciiInvisible[c] {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || invisible(r) {
			return true
		}
		i += n
	}
	return false
}

// plainWord reports eight bytes of printable ASCII (0x20 to 0x7E), read
// as one word: no high bit set, no byte below 0x20, no byte 0x7F.
func plainWord(w string) bool {
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	if x&hi != 0 {
		return false
	}
	below := (x - 0x20*lo) &^ x & hi // a byte below 0x20
	y := x ^ 0x7f*lo
	del := (y - lo) &^ y & hi // a byte equal to 0x7F
	return below == 0 && del == 0
}

// asciiInvisible is invisible for each ASCII character.
var asciiInvisible = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = invisible(rune(c))
	}
	return t
}()

// invisibleRanges are characters a reader cannot see but a model reads.
var invisibleRanges = []struct{ lo, hi rune }{
	{0x00AD, 0x00AD},   // soft hyphen
	{0x034F, 0x034F},   // combining grapheme joiner
	{0x115F, 0x1160},   // Hangul choseong and jungseong fillers
	{0x200B, 0x200F},   // zero-width space and joiners, LRM, RLM
	{0x202A, 0x202E},   // bidi embeddings and overrides
	{0x2060, 0x2064},   // word joiner, invisible operators
	{0x2066, 0x2069},   // bidi isolates
	{0x3164, 0x3164},   // Hangul filler
	{0xFE00, 0xFE0F},   // variation selectors
	{0xFEFF, 0xFEFF},   // zero-width no-break space (BOM)
	{0xFFA0, 0xFFA0},   // halfwidth Hangul filler
	{0xE0000, 0xE007F}, // tag characters: can spell ASCII invisibly
	{0xE0100, 0xE01EF}, // variation selectors supplement
}

// Invisible reports whether [StripInvisible] removes r: a character
// that a reader cannot see (or that reorders what they see) but a model
// reads. The web interface shows such characters as visible markers in
// text it did not sanitise, so the admin sees what the server sent.
func Invisible(r rune) bool { return invisible(r) }

// invisible reports the characters StripInvisible removes: those in
// invisibleRanges and every other format (Cf) or control (Cc) character
// except newline and tab, which keep the admin's layout.
func invisible(r rune) bool {
	if r < 0x80 { // ASCII: the controls but newline and tab
		return (r < 0x20 || r == 0x7f) && r != '\n' && r != '\t'
	}
	for _, rg := range invisibleRanges {
		if r >= rg.lo && r <= rg.hi {
			return true
		}
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r)
}

// ModelDescription is the tool description the model sees:
// "External read-only context from <serverName>. " followed by the
// sanitised admin text. The cap of [SanitizeDescription] applies to the
// admin text alone, before the prefix is added, so the admin's 500
// characters are never cut by the prefix. The server name is sanitised too
// although the API already restricts it.
func ModelDescription(serverName, adminText string) string {
	prefix := "External read-only context from " + SanitizeDescription(serverName) + "."
	if text := SanitizeDescription(adminText); text != "" {
		return prefix + " " + text
	}
	return prefix
}
