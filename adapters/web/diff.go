package web

import (
	"unicode"
	"unicode/utf8"
)

// diffSeg is a run of text in one side of a word diff; Changed marks
// words removed (on the approved side) or added (on the live side).
type diffSeg struct {
	Text    string
	Changed bool
}

// wordDiff compares two texts word by word (a word is a run of letters
// and digits; spaces and each other character are tokens of their own)
// and returns both sides with the changed runs marked. The comparison is
// a longest common subsequence over the tokens that differ between the
// common prefix and suffix; when that middle is too large to compare
// within diffBudget cells, it is marked changed as a whole.
func wordDiff(old, new string) (oldSegs, newSegs []diffSeg) {
	a, b := tokens(old), tokens(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	keepA, keepB := make([]bool, len(am)), make([]bool, len(bm))
	if len(am) > 0 && len(bm) > 0 && len(am)*len(bm) <= diffBudget {
		lcs(am, bm, keepA, keepB)
	}
	oldSegs = segments(a, pre, suf, keepA)
	newSegs = segments(b, pre, suf, keepB)
	return oldSegs, newSegs
}

// diffBudget bounds the comparison table (cells), about 4 MB of int32.
const diffBudget = 1 << 20

// lcs marks the tokens of a longest common subsequence of a and b.
func lcs(a, b []string, keepA, keepB []bool) {
	n, m := len(a), len(b)
	t := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &t[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				*at(i, j) = *at(i+1, j+1) + 1
			case *at(i+1, j) >= *at(i, j+1):
				*at(i, j) = *at(i+1, j)
			default:
				*at(i, j) = *at(i, j+1)
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			keepA[i], keepB[j] = true, true
			i++
			j++
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
}

// segments joins tokens into runs: the common prefix and suffix
// unchanged, the middle changed where keep is false.
func segments(toks []string, pre, suf int, keep []bool) []diffSeg {
	var out []diffSeg
	add := func(s string, changed bool) {
		if n := len(out); n > 0 && out[n-1].Changed == changed {
			out[n-1].Text += s
			return
		}
		out = append(out, diffSeg{Text: s, Changed: changed})
	}
	for i, tok := range toks {
		switch {
		case i < pre || i >= len(toks)-suf:
			add(tok, false)
		default:
			// A space between two changed words reads as part of the change.
			add(tok, !keep[i-pre])
		}
	}
	return out
}

// tokens splits s into words (letters and digits), runs of white space,
// and single other characters.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		switch {
		case isWord(r):
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isWord(r2) {
					break
				}
				j += n2
			}
		case unicode.IsSpace(r):
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				j += n2
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
