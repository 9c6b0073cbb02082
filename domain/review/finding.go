package review

import (
	"strings"
	"unicode/utf8"
)

// MinEvidenceChars is the least evidence that proves a finding: "+" or a
// letter is in every diff and proves nothing.
const MinEvidenceChars = 8

// Proves is the evidence rule of the verifier: a finding survives only
// when its evidence, trimmed, is at least [MinEvidenceChars] characters
// and appears verbatim in one of sources (the diff, the review's files).
func Proves(evidence string, sources ...string) bool {
	evidence = strings.TrimSpace(evidence)
	if utf8.RuneCountInString(evidence) < MinEvidenceChars {
		return false
	}
	for _, s := range sources {
		if strings.Contains(s, evidence) {
			return true
		}
	}
	return false
}
