package secrets

import (
	"strings"
	"testing"
)

// checkHeads compares the head automaton with the head's regexp at every
// keyword hit of every rule in text.
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
		if r.headNFA == nil {
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
				if got, ok := r.headNFA.matchPrefix(w); ok && got != r.head.MatchString(w) {
					t.Errorf("%s: head automaton says %v on %q, the regexp %v", r.id, got, w, !got)
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
