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

// Finding is one verified finding of a review: where, what, and the
// evidence ([Proves]) that kept it. Each adapter has its own wire format
// of it (the API's view, the stored JSONB, the model's answer).
type Finding struct {
	Path     string
	Line     int
	Title    string
	Body     string
	Evidence string
}

// McpStats are a run's MCP statistics: the MCP prompt version (nil when no
// tool was offered), calls that reached a server, bytes the budget kept
// and calls blocked.
type McpStats struct {
	Prompt  *string
	Calls   int
	Bytes   int
	Blocked int
}

// Stats are a run's statistics.
type Stats struct {
	Mcp McpStats
}
