package portfake

import (
	"regexp"

	"github.com/codelotse/codelotse/ports"
)

// Scanner is a [ports.SecretScanner] that knows one rule, AWS access key
// ids: enough for a test to show that a text passes the scanner, without
// the real rule set.
type Scanner struct{}

var awsAccessKey = regexp.MustCompile(`AKIA[0-9A-Z]{16}`)

// Scan implements [ports.SecretScanner].
func (Scanner) Scan(s string) []ports.SecretFinding {
	var out []ports.SecretFinding
	for _, m := range awsAccessKey.FindAllStringIndex(s, -1) {
		out = append(out, ports.SecretFinding{Rule: "aws-access-token", Start: m[0], End: m[1]})
	}
	return out
}

// Redact implements [ports.SecretScanner].
func (Scanner) Redact(s string, _ []ports.SecretFinding) string {
	return awsAccessKey.ReplaceAllString(s, "[REDACTED:aws-access-token]")
}
