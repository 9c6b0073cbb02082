package poison

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/codelotse/codelotse/domain/egress"
	"github.com/codelotse/codelotse/domain/tool"
)

// view is one field as the rules read it.
type view struct {
	where  string
	raw    string // the text as sent (capped, valid UTF-8)
	shown  string // NFKC, tag characters read as ASCII, invisible ones dropped
	words  string // egress.FoldWords: the folded words, one space apart
	depth  int    // 0, or how many decodings made it
	label  string // the encodings that made it ("base64"), for excerpts
	source string // the encoded run it was decoded from
}

func newView(where, text string, depth int) view {
	return view{where: where, raw: text, shown: shownText(text), words: egress.FoldWords(text), depth: depth}
}

// shownText is s in NFKC with tag characters read as the ASCII they
// mirror and every other invisible character dropped.
func shownText(s string) string {
	if isPlainASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if a := egress.Untag(r); a != r {
			return a
		}
		if tool.Invisible(r) {
			return -1
		}
		return r
	}, norm.NFKC.String(s))
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || tool.Invisible(rune(c)) {
			return false
		}
	}
	return true
}

// excerptRadius is how many characters before a match an excerpt shows.
const excerptRadius = 30

// atShown is the excerpt of v.shown around byte offset i.
func (s *scan) atShown(v view, i int) string {
	return s.excerpt(v, window(v.shown, i))
}

// atWords is the excerpt of v.shown around the word that starts at
// byte offset i of v.words: the same word of v.shown, counted.
func (s *scan) atWords(v view, i int) string {
	n := strings.Count(v.words[:i], " ")
	return s.atShown(v, wordStart(v.shown, n))
}

// wordStart is the byte offset of word n of s, words being runs of
// letters, digits and combining marks; len(s) when s has fewer.
func wordStart(s string, n int) int {
	in := false
	for i, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if w && !in {
			if n == 0 {
				return i
			}
			n--
		}
		in = w
	}
	return len(s)
}

// window is the text of s from excerptRadius characters before byte
// offset i on, twice MaxExcerptRunes characters at most.
func window(s string, i int) string {
	i = min(max(i, 0), len(s))
	start := i
	for k := 0; k < excerptRadius && start > 0; k++ {
		_, n := utf8.DecodeLastRuneInString(s[:start])
		start -= n
	}
	end := start
	for k := 0; k < 2*MaxExcerptRunes && end < len(s); k++ {
		_, n := utf8.DecodeRuneInString(s[end:])
		end += n
	}
	return s[start:end]
}

// excerpt is the finding text for a piece of v: where, the encoding
// when v was decoded, and the piece redacted, with white space runs as
// one space and invisible characters as U+XXXX, cut to MaxExcerptRunes.
func (s *scan) excerpt(v view, piece string) string {
	prefix := v.where
	if v.label != "" {
		prefix += " (" + v.label + " decoded)"
	}
	return s.finish(prefix + ": " + piece)
}

// finish redacts text, then writes it visibly and cuts it.
func (s *scan) finish(text string) string {
	if s.c.Redact != nil {
		text = s.c.Redact(text)
	}
	return visible(strings.ToValidUTF8(text, "\uFFFD"), MaxExcerptRunes)
}

// visible writes text with white space runs as one space and invisible
// characters as U+XXXX, at most max characters: a cut text ends in "…",
// and a U+XXXX is never cut.
func visible(text string, max int) string {
	var (
		b     strings.Builder
		cut   int // b.Len() where a cut text ends, before its "…"
		n     int
		space bool
	)
	for _, r := range text {
		tok := token(r)
		if tok == " " {
			if space || n == 0 {
				continue
			}
			space = true
		} else {
			space = false
		}
		k := utf8.RuneCountInString(tok)
		if n+k > max {
			return strings.TrimRight(b.String()[:cut], " ") + "…"
		}
		if n+k <= max-1 {
			cut = b.Len() + len(tok)
		}
		b.WriteString(tok)
		n += k
	}
	return strings.TrimRight(b.String(), " ")
}

// token is how visible writes r: " " for white space, U+XXXX for an
// invisible character, else r.
func token(r rune) string {
	switch {
	case tool.Invisible(r):
		h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
		return "U+" + strings.Repeat("0", max(0, 4-len(h))) + h
	case unicode.IsSpace(r):
		return " "
	}
	return string(r)
}
