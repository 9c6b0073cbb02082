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
// tool was offered), calls that reached a server, bytes the budget kept,
// calls blocked, and what became of each server of the effective policy
// (empty when the gate kept the run from reading them).
type McpStats struct {
	Prompt  *string
	Calls   int
	Bytes   int
	Blocked int
	Servers []ServerOutcome
}

// ServerReason is why a run offered none of a server's tools.
type ServerReason string

// The reasons a run skips a server.
const (
	// ServerUnreachable: the server could not be reached, timed out, did
	// not speak MCP as expected, or its credential could not be opened.
	ServerUnreachable ServerReason = "unreachable"
	// ServerUnauthorized: the server refused the credential (401 or 403).
	ServerUnauthorized ServerReason = "unauthorized"
	// ServerNoPinnedTools: the server listed none of its allowlisted tools
	// with the pinned definition (none allowlisted, changed or gone).
	ServerNoPinnedTools ServerReason = "no_pinned_tools"
	// ServerDisabled: the admin switched the server off.
	ServerDisabled ServerReason = "disabled"
)

// ServerOutcome is one server of a run's effective policy: offered (at
// least one of its tools was offered to the finder) or skipped, and why.
// Reason is "" when it was offered.
type ServerOutcome struct {
	ID      string
	Name    string
	Offered bool
	Reason  ServerReason
}

// Stats are a run's statistics.
type Stats struct {
	Mcp McpStats
}
