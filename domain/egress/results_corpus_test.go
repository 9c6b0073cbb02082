package egress

import (
	"os"
	"strings"
	"testing"
)

// TestBenignCorpusAfterResults: the taint of a run that has also read
// ordinary tool results (a ticket search, a design page, a wiki search)
// keeps none of their identifiers, so the ordinary corpus and searches
// for what the results name (ticket keys, ids, cache keys, commit
// hashes) are all admitted.
func TestBenignCorpusAfterResults(t *testing.T) {
	b, err := os.ReadFile("testdata/results.txt")
	if err != nil {
		t.Fatal(err)
	}
	tk := fixtureTaint(t)
	before := tk.Len()
	for _, result := range strings.Split(string(b), "\n---\n") {
		tk.Add(Collect(result, nil)...)
	}
	if tk.Len() != before {
		t.Errorf("the ordinary results added %d values to the taint, want none", tk.Len()-before)
	}
	terms := []string{"PROJ-12345", "PROJ-12377 regression", "5b10ac8d82e05b22cc7d4ef5", "orders:v2:summary",
		"8f14e45f-ceea-467f-a0e6-2c9d1b4a7e10", "c9f0f895-fb98-4b91-9e1a-0d2b7c3f9a11", "enabled2024", "Jane Doe 2024x",
		"3f2a9c1d0b7e4f6a8c5d2e1f0a9b8c7d6e5f4a3b", "key_version 7", "webhook_secret rotation runbook"}
	for _, term := range readBenign(t) {
		terms = append(terms, term.text)
	}
	for _, term := range terms {
		if !check(tk, term) {
			t.Errorf("blocked after ordinary results: %q", term)
		}
	}
}
