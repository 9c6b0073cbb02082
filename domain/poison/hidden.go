package poison

import (
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/egress"
	"github.com/codelotse/codelotse/domain/tool"
)

// hidden reports the first character tool.Invisible reports: zero-width
// and format characters, bidi controls, ASCII controls (an ANSI escape),
// variation selectors and the tag characters of ASCII smuggling. A run
// of tag characters is shown read as the ASCII it mirrors.
func (s *scan) hidden(v view) (string, bool) {
	i := strings.IndexFunc(v.raw, tool.Invisible)
	if i < 0 {
		return "", false
	}
	if r, _ := utf8.DecodeRuneInString(v.raw[i:]); isTag(r) {
		return s.excerpt(v, tagged(v.raw, i)), true
	}
	return s.excerpt(v, window(v.raw, i)), true
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// tagged is the text before the run of tag characters at i, its first
// character, and the run read as ASCII.
func tagged(s string, i int) string {
	before := window(s[:i], i)
	if n := utf8.RuneCountInString(before); n > 20 {
		before = string([]rune(before)[n-20:])
	}
	first, _ := utf8.DecodeRuneInString(s[i:])
	var read strings.Builder
	for _, r := range s[i:] {
		if !isTag(r) {
			break
		}
		if a := egress.Untag(r); a != r {
			read.WriteRune(a)
		}
		if read.Len() >= MaxExcerptRunes {
			break
		}
	}
	return before + string(first) + "… (tags read: " + read.String() + ")"
}
