package secrets

import (
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// searchingScanner is the scanner with its bounded \b-led rules run as a
// search of their regexp over the window around each keyword hit, as
// gitleaks runs them, instead of anchored at each hit.
func searchingScanner(t *testing.T) *Scanner {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range s.rules {
		if r.anchored != nil && r.window > 0 && r.wordBoundary {
			r.anchored, r.wordBoundary = nil, false
			n++
		}
	}
	if n < 40 {
		t.Fatalf("%d bounded rules are anchored, want the 55 of the rule set", n)
	}
	return s
}

// TestAnchoredBoundedRulesFindWhatASearchFinds: a bounded rule led by \b
// and a keyword is tried anchored at each keyword hit, and finds exactly
// what a search of its regexp finds: on the samples and corpora, and on
// texts that glue their findings together, cut, overlapping and
// separated by nothing or by a word character (a second match inside the
// first is not reported, as a search does not see it).
func TestAnchoredBoundedRulesFindWhatASearchFinds(t *testing.T) {
	anchored, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ref := searchingScanner(t)
	var texts []string
	for _, f := range []string{"testdata/wiki.txt", "testdata/dense.txt", "testdata/planted.txt", "testdata/gitleaks-samples.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	var found []string
	for _, tx := range texts {
		for _, f := range anchored.Scan(tx) {
			found = append(found, tx[f.Start:f.End])
		}
	}
	texts = append(texts, "'ico-rx3wty4G53O6M62WUtVTmXdKH9IEfXWG-glpat-wcvox8i2ta-glpat-0g953tn4dclcfz66rhnymisrwhy.lx9n5tv6r")
	rng := rand.New(rand.NewPCG(7, 28))
	seps := []string{"", " ", "\n", "x", "_", "-", "'", "\"", ";", "=", ".", "a1"}
	for range 100000 {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			sec := found[rng.IntN(len(found))]
			if rng.IntN(3) == 0 {
				sec = sec[rng.IntN(len(sec)):]
			}
			if rng.IntN(3) == 0 {
				sec = sec[:rng.IntN(len(sec)+1)]
			}
			b.WriteString(seps[rng.IntN(len(seps))])
			b.WriteString(sec)
		}
		texts = append(texts, b.String())
	}
	for _, tx := range texts {
		if got, want := anchored.Scan(tx), ref.Scan(tx); !reflect.DeepEqual(got, want) {
			t.Fatalf("on %.200q:\nanchored %v\nsearch   %v", tx, got, want)
		}
	}
}
