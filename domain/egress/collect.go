package egress

import (
	"regexp"
	"strings"
)

// Span is the byte range of one scanner finding in a text.
type Span struct{ Start, End int }

// SecretKeys are the key names whose assigned values are kept although no
// scanner rule recognises them: the keywords of the scanner's
// generic-api-key rule (adapters/secrets checks that each is here) and a
// few spellings of passwords and connection strings.
var SecretKeys = []string{
	"access", "api", "auth", "credential", "creds", "key", "passwd", "password", "secret", "token",
	"pass", "pwd", "dsn", "private", "session", "cookie", "signature",
}

// assignment is a secret-named key, an assignment operator (=, :, :=,
// =>, as in code, YAML, JSON and .env files) and the value, quoted or
// not.
var assignment = regexp.MustCompile(`(?i)[\w.-]*(?:` + strings.Join(SecretKeys, "|") + `)[\w.-]*["']?[ \t]*(?::=|=>|=|:)[ \t]*["'` + "`" + `]?([^\s"'` + "`" + `,;<>(){}\[\]]{8,256})`)

// referenceLike are values that name a secret rather than hold one: a
// variable, a template, a function call, a path or identifier of letters
// only.
var referenceLike = regexp.MustCompile(`^(?:[$%{<@#&*]|.*\(|[A-Za-z_-]+(?:[./:\-][A-Za-z_-]+)*$|[0-9.:-]+$)`)

// placeholders are words that make a value a placeholder, whatever
// surrounds them.
var placeholders = []string{"changeme", "example", "placeholder", "redacted", "xxxxxx", "your_", "your-", "dummy", "******"}

// Collect returns the secret-like values of text: the text of each
// finding, and each value assigned to a key of SecretKeys that is not a
// reference or a placeholder.
func Collect(text string, findings []Span) []string {
	var out []string
	for _, f := range findings {
		if f.Start >= 0 && f.Start < f.End && f.End <= len(text) {
			out = append(out, text[f.Start:f.End])
		}
	}
	for _, m := range assignment.FindAllStringSubmatch(text, -1) {
		if v := strings.TrimRight(m[1], ".:"); secretLike(v) {
			out = append(out, v)
		}
	}
	return out
}

func secretLike(v string) bool {
	if len(v) < MinValue || referenceLike.MatchString(v) {
		return false
	}
	lower := strings.ToLower(v)
	for _, p := range placeholders {
		if strings.Contains(lower, p) {
			return false
		}
	}
	return true
}
