package secrets

import (
	"slices"
	"strings"
	"testing"
)

// checkHeads compares, at every keyword hit of every anchored rule in
// text, the head automaton with the head's regexp, and the anchored
// attempt on its bounded input with the attempt on the whole rest.
func checkHeads(t testing.TB, s *Scanner, text string) {
	// ASCII folding only, as the prefilter does: it keeps the offsets.
	lowb := []byte(text)
	for i, c := range lowb {
		if c >= 'A' && c <= 'Z' {
			lowb[i] = c + 'a' - 'A'
		}
	}
	low := string(lowb)
	for _, r := range s.rules {
		if r.headNFA == nil && r.live == nil {
			continue
		}
		for _, k := range r.keywords {
			for i := 0; ; {
				j := strings.Index(low[i:], k)
				if j < 0 {
					break
				}
				hs := i + j
				w := text[hs:min(len(text), hs+r.headLen)]
				if r.headNFA != nil {
					got, ok := r.headNFA.matchPrefix(w)
					if ok && got != r.head.MatchString(w) {
						t.Errorf("%s: head automaton says %v on %q, the regexp %v", r.id, got, w, !got)
					}
					if nfa, nfaOK := r.headNFA.matchPrefixNFA(w); nfa != got || nfaOK != ok {
						t.Errorf("%s: on %q the deterministic head says %v, %v, the position sets %v, %v", r.id, w, got, ok, nfa, nfaOK)
					}
				}
				if end := r.anchoredEnd(text, hs); r.anchored != nil && end < len(text) {
					full := r.anchored.FindStringSubmatchIndex(text[hs:])
					if cut := r.anchored.FindStringSubmatchIndex(text[hs:end]); !slices.Equal(cut, full) {
						t.Errorf("%s: at %q the attempt on %d bytes finds %v, on the whole rest %v", r.id, w, end-hs, cut, full)
					}
				}
				i = hs + 1
			}
		}
	}
}

// TestHeadNFAMatchesRegexp: the head automaton answers as the head's
// regexp at every keyword hit of the corpus and the samples.
func TestHeadNFAMatchesRegexp(t *testing.T) {
	s := newScanner(t)
	texts := []string{readCorpus(t, "planted"), readCorpus(t, "dense"), readCorpus(t, "wiki")}
	for _, sm := range loadSamples(t) {
		texts = append(texts, sm.TPs...)
		texts = append(texts, sm.FPs...)
	}
	for _, text := range texts {
		checkHeads(t, s, text)
	}
}

// TestHeadDFABuilt: the anchored rules that cost the most on
// keyword-dense text get their deterministic head and their input bound.
func TestHeadDFABuilt(t *testing.T) {
	s := newScanner(t)
	for _, id := range []string{"generic-api-key", "jwt"} {
		i := slices.IndexFunc(s.rules, func(r *rule) bool { return r.id == id })
		if i < 0 || s.rules[i].headNFA == nil || s.rules[i].headNFA.dfa == nil || s.rules[i].live == nil {
			t.Errorf("%s: no deterministic head or no input bound", id)
			continue
		}
		d, l := s.rules[i].headNFA.dfa, s.rules[i].live
		t.Logf("%s: head %d states, %d byte classes; bound %d states", id, len(d.trans)/d.nclass, d.nclass, len(l.trans)/l.nclass)
	}
}

func FuzzHeadNFA(f *testing.F) {
	for _, seed := range []string{`api_key = "9QLVhUQhfByPKSabc"`, "secret for quarter expired, ask", "token:\t'abc",
		"Password => x", "KEY=0123456789", "auth ||= a1b2c3d4e5f6g7", "slack xoxb-1", "ghp_x", "eyJhbGciOiJIUzI1NiJ9"} {
		f.Add(seed)
	}
	s := newScanner(f)
	f.Fuzz(func(t *testing.T, in string) {
		checkHeads(t, s, in)
	})
}
