package secrets

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// litRegexp is an allowlist regexp with a literal prefilter: MatchString
// answers exactly as the regexp would, but runs the costly part only when
// the text holds a literal that part cannot match without.
//
// The regexp is split along its top-level alternation (gitleaks joins an
// allowlist's regexes into one (?:a|b|…), so these are the listed
// regexes). A branch every match of which contains one of a set of
// literals (see requiredLiterals) joins the filtered part, with its
// literals in an Aho-Corasick automaton; the others, and branches whose
// literals would filter nothing (a single letter or digit), form the part
// that always runs. Matching is case-insensitive on ASCII in the
// automaton, a superset of what the branches match; a text with non-ASCII
// bytes skips the filter, because case folding can map them to ASCII
// literals (the Kelvin sign to k).
type litRegexp struct {
	always   *regexp.Regexp // nil when every branch is filtered
	filtered *regexp.Regexp // nil when no branch is
	lits     *acMatcher
}

func compileLitRegexp(expr string) (*litRegexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	branches := []*syntax.Regexp{tree}
	if tree.Op == syntax.OpAlternate {
		branches = tree.Sub
	}
	var always, filtered []*syntax.Regexp
	var lits []string
	for _, b := range branches {
		if set, ok := requiredLiterals(b); ok && selective(set) {
			filtered = append(filtered, b)
			lits = append(lits, set...)
		} else {
			always = append(always, b)
		}
	}
	out := &litRegexp{}
	if out.always, err = compileBranches(always); err != nil {
		return nil, err
	}
	if out.filtered, err = compileBranches(filtered); err != nil {
		return nil, err
	}
	if len(filtered) > 0 {
		out.lits = newACMatcher(dedupe(lits))
	}
	return out, nil
}

func compileBranches(bs []*syntax.Regexp) (*regexp.Regexp, error) {
	switch len(bs) {
	case 0:
		return nil, nil
	case 1:
		return regexp.Compile(bs[0].String())
	}
	return regexp.Compile((&syntax.Regexp{Op: syntax.OpAlternate, Sub: bs}).String())
}

// MatchString reports whether the regexp matches s.
func (l *litRegexp) MatchString(s string) bool {
	if l.always != nil && l.always.MatchString(s) {
		return true
	}
	if l.filtered == nil {
		return false
	}
	if isASCII(s) && !l.lits.contains(s) {
		return false
	}
	return l.filtered.MatchString(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// requiredLiterals returns lowercase ASCII strings of which every match of
// re contains at least one (ASCII case-insensitively), when it can prove
// it. Strings with non-ASCII characters are left out: they cannot occur in
// the ASCII texts the filter is used on.
func requiredLiterals(re *syntax.Regexp) ([]string, bool) {
	var set []string
	ok := false
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return requiredLiterals(re.Sub[0])
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			sub, ok := requiredLiterals(s)
			if !ok {
				return nil, false
			}
			set = append(set, sub...)
		}
		return set, true
	case syntax.OpConcat:
		// The best of: each run of consecutive finite parts (expanded, as
		// containsKeyword does) and each other part on its own.
		best, bestOK := []string(nil), false
		consider := func(s []string, sok bool) {
			if sok && nonEmpty(s) && (!bestOK || better(s, best)) {
				best, bestOK = s, true
			}
		}
		run := []string{""}
		for _, s := range re.Sub {
			if fin, fok := finite(s); fok {
				if next, cok := cross(run, fin); cok {
					run = next
					continue
				}
				consider(run, true)
				run = fin
				continue
			}
			consider(run, true)
			run = []string{""}
			consider(requiredLiterals(s))
		}
		consider(run, true)
		return best, bestOK
	}
	if set, ok = finite(re); !ok || !nonEmpty(set) {
		return nil, false
	}
	return set, true
}

// nonEmpty reports whether set is a usable requirement: not empty (a
// branch that only matches non-ASCII text is filtered by the ASCII check)
// and without the empty string.
func nonEmpty(set []string) bool {
	for _, s := range set {
		if s == "" {
			return false
		}
	}
	return true
}

// better prefers the set whose shortest literal is longer, then the
// smaller set.
func better(a, b []string) bool {
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(set []string) int {
	m := -1
	for _, s := range set {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

// selective reports whether set is worth a filter: none of its literals
// is a single letter or digit, which nearly every text holds.
func selective(set []string) bool {
	for _, s := range set {
		if len(s) == 1 && isWordByte(s[0]) {
			return false
		}
	}
	return true
}

func dedupe(set []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range set {
		if isASCII(s) && !seen[s] {
			seen[s] = true
			out = append(out, strings.ToLower(s))
		}
	}
	return out
}
