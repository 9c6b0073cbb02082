package secrets

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// unbounded is maxMatchLen's answer for a regexp with *, + or {n,}.
const unbounded = -1

// maxMatchLen returns the longest match, in bytes, that re can produce, or
// unbounded.
func maxMatchLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += maxRuneLen(r, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], unicode.MaxRune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxMatchLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return unbounded
	case syntax.OpRepeat:
		if re.Max < 0 {
			return unbounded
		}
		n := maxMatchLen(re.Sub[0])
		if n == unbounded {
			return unbounded
		}
		return n * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		// A concatenation is as long as its parts together, an
		// alternation as its longest branch.
		acc := 0
		for _, s := range re.Sub {
			n := maxMatchLen(s)
			if n == unbounded {
				return unbounded
			}
			if re.Op == syntax.OpConcat {
				acc += n
			} else {
				acc = max(acc, n)
			}
		}
		return acc
	}
	return unbounded
}

// maxRuneLen is the longest UTF-8 encoding of r, or of any rune in its
// case-folding orbit when the literal is case-insensitive (k and the
// Kelvin sign differ in length).
func maxRuneLen(r rune, fold bool) int {
	n := utf8.RuneLen(r)
	if !fold {
		return n
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		n = max(n, utf8.RuneLen(f))
	}
	return n
}

// finiteLimit bounds the string sets that containsKeyword enumerates.
const finiteLimit = 512

// finite returns every lowercased string re can match when that set is
// small, for the keyword analysis below.
func finite(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}, true
	case syntax.OpCharClass:
		return finiteClass(re.Rune)
	case syntax.OpCapture:
		return finite(re.Sub[0])
	case syntax.OpQuest:
		s, ok := finite(re.Sub[0])
		if !ok {
			return nil, false
		}
		return append([]string{""}, s...), true
	case syntax.OpRepeat:
		return finiteRepeat(re)
	case syntax.OpConcat:
		cur := []string{""}
		for _, s := range re.Sub {
			set, ok := finite(s)
			if !ok {
				return nil, false
			}
			if cur, ok = cross(cur, set); !ok {
				return nil, false
			}
		}
		return cur, true
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			set, ok := finite(s)
			if !ok {
				return nil, false
			}
			out = append(out, set...)
		}
		return out, len(out) <= finiteLimit
	}
	return nil, false
}

// finiteClass is finite for a character class, given as its lo, hi
// range pairs.
func finiteClass(ranges []rune) ([]string, bool) {
	seen := map[string]bool{}
	var out []string
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if int(hi-lo) > finiteLimit {
			return nil, false
		}
		for r := lo; r <= hi; r++ {
			s := strings.ToLower(string(r))
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		if len(out) > finiteLimit {
			return nil, false
		}
	}
	return out, true
}

// finiteRepeat is finite for a repetition; one that can repeat more than
// 8 times is never small.
func finiteRepeat(re *syntax.Regexp) ([]string, bool) {
	if re.Max < 0 || re.Max > 8 {
		return nil, false
	}
	sub, ok := finite(re.Sub[0])
	if !ok {
		return nil, false
	}
	var out []string
	cur := []string{""}
	for n := 0; n <= re.Max; n++ {
		if n >= re.Min {
			out = append(out, cur...)
		}
		if cur, ok = cross(cur, sub); !ok {
			return nil, false
		}
	}
	return out, len(out) <= finiteLimit
}

func cross(a, b []string) ([]string, bool) {
	if len(a)*len(b) > finiteLimit {
		return nil, false
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out, true
}

// containsKeyword reports whether every match of re is certain to contain
// one of keywords (lowercase, compared case-insensitively). It is
// conservative: false means "not proven", and such a rule is scanned over
// the whole text, as gitleaks does, instead of in windows around its
// keyword hits.
func containsKeyword(re *syntax.Regexp, keywords []string) bool {
	all := func(set []string) bool {
		if len(set) == 0 {
			return false
		}
		for _, s := range set {
			if !hasAny(s, keywords) {
				return false
			}
		}
		return true
	}
	switch re.Op {
	case syntax.OpCapture:
		return containsKeyword(re.Sub[0], keywords)
	case syntax.OpPlus:
		return containsKeyword(re.Sub[0], keywords)
	case syntax.OpRepeat:
		return re.Min >= 1 && containsKeyword(re.Sub[0], keywords)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !containsKeyword(s, keywords) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		// Runs of consecutive finite children are expanded and checked
		// as a whole, so that gh[su]_ proves the keywords ghs_ and ghu_.
		run := []string{""}
		for _, s := range re.Sub {
			if containsKeyword(s, keywords) {
				return true
			}
			set, ok := finite(s)
			if ok {
				if next, ok := cross(run, set); ok {
					run = next
					continue
				}
			}
			if all(run) {
				return true
			}
			run = []string{""}
			if ok {
				run = set
			}
		}
		return all(run)
	}
	set, ok := finite(re)
	return ok && all(set)
}

func hasAny(s string, keywords []string) bool {
	for _, k := range keywords {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}
