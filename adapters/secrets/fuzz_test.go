package secrets

import (
	"strings"
	"testing"
)

// FuzzScan checks that Scan never panics, returns in-bounds, non-empty
// ranges in order of Start, and that Redact leaves no finding's text
// behind (when that text is long enough to mean something and occurs once,
// since a second, unflagged occurrence elsewhere would be legitimate).
func FuzzScan(f *testing.F) {
	for _, seed := range []string{
		"", awsKey, ghToken, slackBot, stripeKey, rsaKey, pgURL, email,
		`api_key = "9QLVhUQhfByPKS"`, "password: ********", "git@github.com:o/r",
		"https://u:p@ss@h/", "ééé@ü.de", "-----BEGIN PRIVATE KEY-----",
		"\xff\xfe" + ghToken, "token=" + strings.Repeat("a1B2", 100),
	} {
		f.Add(seed)
	}
	s := newScanner(f)
	f.Fuzz(func(t *testing.T, in string) {
		fs := s.Scan(in)
		prev := 0
		for _, fd := range fs {
			if fd.Start < 0 || fd.End > len(in) || fd.Start >= fd.End {
				t.Fatalf("Scan(%q): range %d..%d out of bounds (len %d)", in, fd.Start, fd.End, len(in))
			}
			if fd.Start < prev {
				t.Fatalf("Scan(%q): findings not ordered by Start: %v", in, fs)
			}
			prev = fd.Start
		}
		red := s.Redact(in, s.Scan(in))
		for _, fd := range fs {
			secret := in[fd.Start:fd.End]
			if len(secret) >= 8 && strings.Count(in, secret) == 1 && strings.Contains(red, secret) {
				t.Fatalf("Redact(%q) = %q, still holds %q (%s)", in, red, secret, fd.Rule)
			}
		}
	})
}
