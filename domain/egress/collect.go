package egress

import (
	"bytes"
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

// placeholders are words that make a value a placeholder, whatever
// surrounds them.
var placeholders = []string{"changeme", "example", "placeholder", "redacted", "xxxxxx", "your_", "your-", "dummy", "******"}

// Collect returns the secret-like values of text: the text of each
// finding, and each value assigned to a key that names one of SecretKeys
// (with =, :, := or =>, as in code, YAML, JSON and .env files, quoted or
// not) that is not a reference or a placeholder.
func Collect(text string, findings []Span) []string {
	var out []string
	for _, f := range findings {
		if f.Start >= 0 && f.Start < f.End && f.End <= len(text) {
			out = append(out, secretPart(text[f.Start:f.End]))
		}
	}
	for op := 0; op < len(text); op++ {
		if text[op] != ':' && text[op] != '=' {
			continue
		}
		if v, end, ok := assigned(text, op); ok {
			out = append(out, secretPart(v))
			op = end - 1
		}
	}
	return out
}

// secretPart is a finding without what is not secret in it, so that
// naming its kind or reading its plain parts is no fragment of the value:
// a private key's armor lines ("-----BEGIN RSA PRIVATE KEY-----"), a
// URL's scheme and host (a webhook's "https://hooks.slack.com"), a JWT's
// header and claims (base64 of readable JSON).
func secretPart(v string) string {
	if parts := strings.Split(v, "."); len(parts) == 3 && strings.HasPrefix(v, "eyJ") {
		return parts[2] // a JWT's header and claims are readable base64; its signature is the secret
	}
	if strings.HasPrefix(v, "-----") {
		var lines []string
		for _, l := range strings.Split(v, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "-----") {
				lines = append(lines, l)
			}
		}
		v = strings.Join(lines, "\n")
	}
	if i := strings.Index(v, "://"); i >= 0 {
		if j := strings.IndexByte(v[i+3:], '/'); j >= 0 {
			v = v[i+3+j:]
		}
	}
	return v
}

// assigned reads the assignment whose operator starts at text[op]: the
// value, where it ends, and whether the key names a secret and the value
// is secret-like.
func assigned(text string, op int) (string, int, bool) {
	k := op
	for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k > 0 && (text[k-1] == '"' || text[k-1] == '\'') {
		k--
	}
	keyEnd := k
	for k > 0 && keyEnd-k < 64 && keyByte(text[k-1]) {
		k--
	}
	if !secretKey(text[k:keyEnd]) {
		return "", 0, false
	}
	v := op + 1
	if v < len(text) && (text[op] == ':' && text[v] == '=' || text[op] == '=' && text[v] == '>') {
		v++
	}
	for v < len(text) && (text[v] == ' ' || text[v] == '\t') {
		v++
	}
	if v < len(text) && (text[v] == '"' || text[v] == '\'' || text[v] == '`') {
		v++
	}
	end := v
	for end < len(text) && end-v <= 256 && !valueStop[text[end]] {
		end++
	}
	value := strings.TrimRight(text[v:end], ".:")
	if end-v > 256 || end < len(text) && text[end] == '(' || !secretLike(value) {
		return "", 0, false
	}
	return value, end, true
}

func keyByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '.' || b == '-'
}

// secretKey reports a key that holds one of SecretKeys, in any case.
func secretKey(key string) bool {
	if len(key) < 3 {
		return false
	}
	var buf [64]byte
	lower := buf[:len(key)]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, k := range secretKeyBytes {
		if bytes.Contains(lower, k) {
			return true
		}
	}
	return false
}

var secretKeyBytes = func() (out [][]byte) {
	for _, k := range SecretKeys {
		out = append(out, []byte(k))
	}
	return out
}()

// valueStop ends an unquoted or quoted value.
var valueStop = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n\"'`,;<>(){}[]") {
		t[c] = true
	}
	return t
}()

// secretLike reports a value that can hold a secret: not a variable or
// template ($X, %X%, {{x}}, <x>, @x, #x, &x, *x), not a name or path of
// letters alone (a reference such as process.env.TOKEN), not a number,
// version or time, not a placeholder.
func secretLike(v string) bool {
	if len(v) < MinValue || strings.IndexByte("$%{<@#&*", v[0]) >= 0 {
		return false
	}
	name, number := true, true
	for i := 0; i < len(v); i++ {
		c := v[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit := c >= '0' && c <= '9'
		sep := c == '_' || c == '-' || c == '.' || c == '/' || c == ':'
		name = name && (letter || sep)
		number = number && (digit || c == '.' || c == ':' || c == '-')
	}
	if name || number {
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
