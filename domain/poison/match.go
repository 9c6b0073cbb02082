package poison

import (
	"regexp"
	"strings"
)

// A phrase is a pattern tried only where one of its anchors (the
// literals it can begin with) occurs, anchored there and on at most span
// bytes: the work is the anchors' occurrences times a short match,
// never a pass of the whole pattern over the whole text.
type phrase struct {
	anchors []string
	re      *regexp.Regexp
	words   bool // an anchor must start a word of a FoldWords text
}

// phraseSpan caps the text one anchored match reads.
const phraseSpan = 240

// wordsPhrase is a phrase of folded words (egress.FoldWords: lower case,
// one space between words, "i" read as "l" as Fold reads it), written in
// plain words and folded here: pattern and anchors ("|" between them)
// must not use "i" as regexp syntax. The pattern must end at a word
// boundary itself.
func wordsPhrase(anchors, pattern string) phrase {
	fold := func(s string) string { return strings.ReplaceAll(s, "i", "l") }
	return phrase{anchors: strings.Split(fold(anchors), "|"), re: regexp.MustCompile(`^(?:` + fold(pattern) + `)`), words: true}
}

// textPhrase is a phrase of the shown text in lower case (lowerASCII):
// anchors are lower case; the pattern is matched ignoring case.
func textPhrase(anchors, pattern string) phrase {
	return phrase{anchors: strings.Split(anchors, "|"), re: regexp.MustCompile(`^(?i:` + pattern + `)`)}
}

// first is the offset of the first match of p in text, or -1. low is
// text for a words phrase, lowerASCII(text) for a text phrase.
func (p phrase) first(text string) int {
	best := -1
	for _, a := range p.anchors {
		for off := 0; off < len(text) && (best < 0 || off < best); {
			i := strings.Index(text[off:], a)
			if i < 0 {
				break
			}
			i += off
			if best >= 0 && i >= best {
				break
			}
			if (!p.words || i == 0 || text[i-1] == ' ') && p.re.MatchString(text[i:min(len(text), i+phraseSpan)]) {
				best = i
				break
			}
			off = i + 1
		}
	}
	return best
}

// firstWhere is the offset of the first match of p in text that ok
// accepts (given the match's start and end), or -1.
func (p phrase) firstWhere(text string, ok func(start, end int) bool) int {
	best := -1
	for _, a := range p.anchors {
		for off := 0; off < len(text); {
			i := strings.Index(text[off:], a)
			if i < 0 || best >= 0 && off+i >= best {
				break
			}
			i += off
			off = i + 1
			if p.words && i > 0 && text[i-1] != ' ' {
				continue
			}
			if m := p.re.FindStringIndex(text[i:min(len(text), i+phraseSpan)]); m != nil && ok(i, i+m[1]) {
				best = i
				break
			}
		}
	}
	return best
}

// firstOf is the first match of any of the phrases, or -1.
func firstOf(text string, ps []phrase) int {
	best := -1
	for _, p := range ps {
		if i := p.first(text); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// wordsAt maps an offset of v.words to the offset of the same word in
// v.shown.
func wordsAt(v view, i int) int {
	return wordStart(v.shown, strings.Count(v.words[:i], " "))
}

// mustAnchored compiles a pattern anchored at the start.
func mustAnchored(pattern string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + pattern + `)`) }
