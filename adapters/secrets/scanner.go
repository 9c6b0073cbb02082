// Package secrets is the secret scanner of MCP tool calls: gitleaks'
// rule set (its generated gitleaks.toml, embedded and compiled at init)
// behind our own keyword prefilter, plus rules for e-mail addresses and
// credentials in URLs. It implements [ports.SecretScanner].
//
// The scanner guards against accidental leakage. It does not see secrets
// that are encoded (base64, hex), split across lines or otherwise
// disguised on purpose, nor free-text personal data such as names.
package secrets

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/codelotse/codelotse/ports"
)

// Scanner finds secrets, credentials in URLs and e-mail addresses. It is
// immutable after [New] and safe for concurrent use.
type Scanner struct {
	rules    []*rule
	global   *allowlist
	ac       *acMatcher
	kwRules  [][]int32 // keyword index -> rule indexes
	kwLen    []int
	hitsPool sync.Pool
}

var _ ports.SecretScanner = (*Scanner)(nil)

// New compiles the rule set. It fails only if the embedded rules are
// broken, which the package tests rule out.
func New() (*Scanner, error) {
	gl, global, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	own, err := ownRules()
	if err != nil {
		return nil, err
	}
	s := &Scanner{rules: append(gl, own...), global: global}

	kwIndex := map[string]int32{}
	var keywords []string
	for ri, r := range s.rules {
		for _, k := range r.keywords {
			ki, ok := kwIndex[k]
			if !ok {
				ki = int32(len(keywords))
				kwIndex[k] = ki
				keywords = append(keywords, k)
				s.kwRules = append(s.kwRules, nil)
				s.kwLen = append(s.kwLen, len(k))
			}
			if !slices.Contains(s.kwRules[ki], int32(ri)) {
				s.kwRules[ki] = append(s.kwRules[ki], int32(ri))
			}
		}
	}
	s.ac = newACMatcher(keywords)
	s.hitsPool.New = func() any { return new(scanState) }
	return s, nil
}

// Rules returns the ids of the rules in use, gitleaks' first.
func (s *Scanner) Rules() []string {
	ids := make([]string, len(s.rules))
	for i, r := range s.rules {
		ids[i] = r.id
	}
	return ids
}

// scanState is the per-call scratch space, pooled to keep Scan's
// allocations to its result on keyword-free text.
type scanState struct {
	hits    []acHit
	windows [][]window // rule index -> windows
	touched []int32
}

type window struct{ start, end int }

// Scan returns every finding in order of Start (then longest first).
// Findings of different rules may overlap; a generic-api-key finding that
// lies within another rule's finding is dropped, as gitleaks does.
func (s *Scanner) Scan(text string) []ports.SecretFinding {
	st := s.hitsPool.Get().(*scanState)
	defer s.hitsPool.Put(st)
	st.hits = s.ac.scan(text, st.hits[:0])
	if len(st.hits) == 0 {
		return nil
	}
	if len(st.windows) < len(s.rules) {
		st.windows = make([][]window, len(s.rules))
	}
	st.touched = st.touched[:0]

	// Windows per rule, merged as they come: hits arrive in order of end
	// offset, so a rule's windows arrive in order of start too.
	for _, h := range st.hits {
		kl := s.kwLen[h.kw]
		for _, ri := range s.kwRules[h.kw] {
			r := s.rules[ri]
			w := window{0, len(text)}
			if r.anchored != nil {
				// One zero-width "window" per distinct hit start.
				hs := h.end - kl
				w = window{hs, hs}
				if ws := st.windows[ri]; len(ws) > 0 && ws[len(ws)-1].start == hs {
					continue
				}
				if len(st.windows[ri]) == 0 {
					st.touched = append(st.touched, ri)
				}
				st.windows[ri] = append(st.windows[ri], w)
				continue
			} else if r.window > 0 {
				// A match holds the keyword and is at most r.window long,
				// so it lies in [end-window, start+window]; one more byte
				// each side keeps \b and the like seeing the true context.
				w = window{max(0, h.end-kl-r.window-1), min(len(text), h.end+r.window+1)}
			}
			ws := st.windows[ri]
			if len(ws) == 0 {
				st.touched = append(st.touched, ri)
			}
			if n := len(ws); n > 0 && w.start <= ws[n-1].end {
				ws[n-1].end = max(ws[n-1].end, w.end)
			} else {
				ws = append(ws, w)
			}
			st.windows[ri] = ws
		}
	}

	var out []ports.SecretFinding
	slices.Sort(st.touched)
	for _, ri := range st.touched {
		r := s.rules[ri]
		next := 0 // where the last anchored match of r ended
		for _, w := range st.windows[ri] {
			switch {
			case r.anchored == nil:
				out = s.matchRule(r, text, w, out)
			case r.window > 0 && w.start < next:
				// A bounded rule reads the text as a search of its
				// regexp would: no match starts inside the last one.
			default:
				var end int
				out, end = s.matchAnchored(r, text, w.start, out)
				next = max(next, end)
			}
		}
		st.windows[ri] = st.windows[ri][:0]
	}
	return normalize(out)
}

// matchRule runs r's regexp over text[w.start:w.end] and keeps the
// matches that pass the checks.
func (s *Scanner) matchRule(r *rule, text string, w window, out []ports.SecretFinding) []ports.SecretFinding {
	chunk := text[w.start:w.end]
	for _, m := range r.re.FindAllStringIndex(chunk, -1) {
		ms, me := w.start+m[0], w.start+m[1]
		// gitleaks trims newlines off the match.
		for ms < me && text[ms] == '\n' {
			ms++
		}
		for me > ms && text[me-1] == '\n' {
			me--
		}
		if ms == me {
			continue
		}
		// Like gitleaks, find the groups by matching the match alone.
		sub := r.re.FindStringSubmatchIndex(text[ms:me])
		if f, ok := s.accept(r, text, ms, me, sub); ok {
			out = append(out, f)
		}
	}
	return out
}

// matchAnchored tries r's anchored form at a keyword hit starting at hs;
// end is where its match ended (0 without one), kept or not.
func (s *Scanner) matchAnchored(r *rule, text string, hs int, out []ports.SecretFinding) (_ []ports.SecretFinding, end int) {
	if r.wordBoundary && hs > 0 && isWordByte(text[hs-1]) == isWordByte(text[hs]) {
		return out, 0
	}
	if r.head != nil && !r.headMatches(text[hs:min(len(text), hs+r.headLen)]) {
		return out, 0
	}
	sub := r.anchored.FindStringSubmatchIndex(text[hs:r.anchoredEnd(text, hs)])
	if sub == nil {
		return out, 0
	}
	end = hs + sub[1]
	me := end
	for me > hs && text[me-1] == '\n' {
		me--
	}
	if me == hs {
		return out, end
	}
	// The lazy prefix lets the match start up to prefixMax prefix-class
	// characters earlier; the leftmost start is the one gitleaks reports.
	ms := hs
	for n := 0; n < r.prefixMax && ms > 0; n++ {
		c, size := utf8.DecodeLastRuneInString(text[:ms])
		if !inClass(r.prefix, c) {
			break
		}
		ms -= size
	}
	shift := hs - ms
	for i := range sub {
		if sub[i] >= 0 {
			sub[i] += shift
		}
	}
	sub[0] = 0
	if f, ok := s.accept(r, text, ms, me, sub); ok {
		out = append(out, f)
	}
	return out, end
}

// anchoredEnd returns where the input of an anchored attempt at hs can
// end: no match reads a byte beyond it, and the byte after the last one a
// match can read is kept, so that \b and $ see the same as in text.
func (r *rule) anchoredEnd(text string, hs int) int {
	if r.anchoredCap >= 0 {
		return min(len(text), hs+r.anchoredCap)
	}
	if r.live != nil {
		if n, ok := r.live.deadAt(text[hs:]); ok {
			return hs + n + 1
		}
	}
	return len(text)
}

// headMatches runs the head test on w, the text from a keyword hit.
func (r *rule) headMatches(w string) bool {
	if r.headNFA != nil {
		if m, ok := r.headNFA.matchPrefix(w); ok {
			return m
		}
	}
	return r.head.MatchString(w)
}

// isWordByte is \b's notion of a word character (ASCII).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// accept applies a rule's checks to the match text[ms:me] whose groups
// are sub (relative to ms), as gitleaks' detectRule does: pick the secret
// group, then entropy, then the global and the rule's allowlists.
func (s *Scanner) accept(r *rule, text string, ms, me int, sub []int) (ports.SecretFinding, bool) {
	match := text[ms:me]
	ss, se := r.secretSpan(ms, me, sub)
	secret := text[ss:se]
	if r.entropy != 0 && shannonEntropy(secret) <= r.entropy {
		return ports.SecretFinding{}, false
	}
	if r.check != nil && !r.check(text, ss, se) {
		return ports.SecretFinding{}, false
	}
	// Stopwords of OR allowlists first: a trie walk is far cheaper than
	// the allowlist regexps, and the order does not change the outcome.
	for _, a := range r.allowlists {
		if !a.and && a.stopwords != nil && a.stopwords.contains(secret) {
			return ports.SecretFinding{}, false
		}
	}
	line := lineOf(text, ms, me)
	if r.global && s.global.allowed(secret, match, line) {
		return ports.SecretFinding{}, false
	}
	for _, a := range r.allowlists {
		if a.allowed(secret, match, line) {
			return ports.SecretFinding{}, false
		}
	}
	return ports.SecretFinding{Rule: r.id, Start: ss, End: se}, true
}

// secretSpan returns where the secret lies in the match text[ms:me] whose
// groups are sub (relative to ms): the rule's secret group, or without
// one the first non-empty group, when that group matched something inside
// the match; else the whole match.
func (r *rule) secretSpan(ms, me int, sub []int) (int, int) {
	if len(sub) < 4 {
		return ms, me
	}
	g := -1
	if r.secretGroup > 0 {
		if 2*r.secretGroup+1 < len(sub) {
			g = r.secretGroup
		}
	} else {
		for i := 1; 2*i+1 < len(sub); i++ {
			if sub[2*i] >= 0 && sub[2*i+1] > sub[2*i] {
				g = i
				break
			}
		}
	}
	if g > 0 && sub[2*g] >= 0 && sub[2*g+1] > sub[2*g] && ms+sub[2*g+1] <= me {
		return ms + sub[2*g], ms + sub[2*g+1]
	}
	return ms, me
}

// lineOf returns the lines that hold text[start:end].
func lineOf(text string, start, end int) string {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := strings.IndexByte(text[end:], '\n')
	if le < 0 {
		le = len(text)
	} else {
		le += end
	}
	return text[ls:le]
}

// normalize sorts findings, removes duplicates and drops generic findings
// inside a specific one.
func normalize(fs []ports.SecretFinding) []ports.SecretFinding {
	if len(fs) == 0 {
		return nil
	}
	slices.SortFunc(fs, func(a, b ports.SecretFinding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	fs = slices.Compact(fs)
	fs = dropEmailInURLCredentials(fs)
	// One pass by groups of equal Start: maxEnd is the furthest end of a
	// specific finding starting at or before the group, so a generic
	// finding ending by then lies inside it.
	out := fs[:0]
	maxEnd := -1
	for i := 0; i < len(fs); {
		j := i
		for ; j < len(fs) && fs[j].Start == fs[i].Start; j++ {
			if !isGeneric(fs[j].Rule) {
				maxEnd = max(maxEnd, fs[j].End)
			}
		}
		for k := i; k < j; k++ {
			if f := fs[k]; !isGeneric(f.Rule) || f.End > maxEnd {
				out = append(out, f)
			}
		}
		i = j
	}
	return out
}

// dropEmailInURLCredentials drops the e-mail finding that user:pw@host
// produces alongside the url-credentials finding (pw@host reads as an
// address); the credentials finding already covers the secret.
func dropEmailInURLCredentials(fs []ports.SecretFinding) []ports.SecretFinding {
	var creds []ports.SecretFinding
	for _, f := range fs {
		if f.Rule == RuleURLCredentials {
			creds = append(creds, f)
		}
	}
	if len(creds) == 0 {
		return fs
	}
	return slices.DeleteFunc(fs, func(f ports.SecretFinding) bool {
		if f.Rule != RuleEmail {
			return false
		}
		for _, c := range creds {
			if f.Start < c.End && c.Start < f.End {
				return true
			}
		}
		return false
	})
}

func isGeneric(id string) bool { return strings.Contains(id, "generic") }

// Redact replaces each finding of text (as [Scanner.Scan] returned them,
// ordered by Start) by [REDACTED:<rule>]. Overlapping findings are replaced
// as one range, their union, named after the first.
func (s *Scanner) Redact(text string, fs []ports.SecretFinding) string {
	if len(fs) == 0 {
		return text
	}
	var sb strings.Builder
	sb.Grow(len(text))
	pos := 0
	for i := 0; i < len(fs); {
		start, end, id := fs[i].Start, fs[i].End, fs[i].Rule
		i++
		for i < len(fs) && fs[i].Start < end {
			end = max(end, fs[i].End)
			i++
		}
		sb.WriteString(text[pos:start])
		sb.WriteString("[REDACTED:")
		sb.WriteString(id)
		sb.WriteByte(']')
		pos = end
	}
	sb.WriteString(text[pos:])
	return sb.String()
}
