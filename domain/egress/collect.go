package egress

import (
	"strings"
	"unicode"
)

// Span is the byte range of one scanner finding in a text.
type Span struct{ Start, End int }

// The words of key names whose assigned values are kept although no
// scanner rule recognises them. A key is read as its words (snake_case,
// kebab-case, dotted and camelCase split: "dbPassword" is "db",
// "password"); it names a secret when a word is one of strongKeys or ends
// with one of five letters or more ("accesstoken"), or when it has the
// word "key" next to one of keyQualifiers anywhere in it ("api_key",
// "AWS_ACCESS_KEY_ID", "privateKey"), or a word that is a qualifier
// followed by "key" ("apikey"). So "author", "cacheKey", "primaryKey",
// "keyId" and a ticket's "key" name none.
var (
	strongKeys    = []string{"password", "passwd", "pass", "pwd", "secret", "secrets", "token", "tokens", "credential", "credentials", "creds", "auth", "dsn", "cookie"}
	keyQualifiers = []string{"api", "access", "secret", "private", "client", "signing", "master", "encryption", "app", "deploy", "ssh", "license", "webhook"}
)

// SecretKeys are all the words secretKey reads: the scanner's
// generic-api-key keywords among them (adapters/secrets checks that each
// is here).
var SecretKeys = append(append([]string{"key"}, strongKeys...), keyQualifiers...)

// placeholders are words that make a value a placeholder, whatever
// surrounds them.
var placeholders = []string{"changeme", "example", "placeholder", "redacted", "xxxxxx", "your_", "your-", "dummy", "******"}

// Collect returns the secret-like values of text: the secret part of
// each finding, and each value assigned to a key that names a secret
// (secretKey; with =, :, := or =>, as in code, YAML, JSON and .env files,
// quoted or not) that is not a reference or a placeholder.
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

// secretPart is a value without what is not secret in it, so that naming
// its kind or reading its plain parts is no fragment of it: a JWT's
// header and claims (base64 of readable JSON), a private key's armor
// ("-----BEGIN RSA PRIVATE KEY-----", with its line breaks written as
// "\n" too), a URL's scheme and host (a webhook's "https://hooks.slack.com";
// the user and password and the path are kept).
func secretPart(v string) string {
	if parts := strings.Split(v, "."); len(parts) == 3 && strings.HasPrefix(v, "eyJ") {
		return parts[2]
	}
	if strings.Contains(v, "-----") {
		v = strings.NewReplacer(`\n`, "\n", `\r`, "\n").Replace(v)
		var lines []string
		for _, l := range strings.Split(v, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "-----") {
				lines = append(lines, l)
			}
		}
		v = strings.Join(lines, "\n")
	}
	if i := strings.Index(v, "://"); i >= 0 {
		rest := v[i+3:]
		user, path := "", ""
		if at := strings.LastIndexByte(strings.SplitN(rest, "/", 2)[0], '@'); at >= 0 {
			user, rest = rest[:at], rest[at+1:]
		}
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			path = rest[j:]
		}
		v = user + path
	}
	return v
}

// assigned reads the assignment whose operator starts at text[op]: the
// value, where it ends, and whether the key names a secret and the value
// is secret-like.
func assigned(text string, op int) (string, int, bool) {
	if !secretKey(keyBefore(text, op)) {
		return "", 0, false
	}
	value, end, ok := valueAfter(text, op)
	if !ok || !secretLike(value) {
		return "", 0, false
	}
	return value, end, true
}

// keyBefore is the key an assignment operator at text[op] assigns to: at
// most 64 key characters, before blanks and a closing quote.
func keyBefore(text string, op int) string {
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
	return text[k:keyEnd]
}

// valueStart is where the value of an assignment operator at text[op]
// starts, past the operator's second character, blanks and an opening
// quote, and that quote (0 for none).
func valueStart(text string, op int) (v int, quote byte) {
	v = op + 1
	if v < len(text) && (text[op] == ':' && text[v] == '=' || text[op] == '=' && text[v] == '>') {
		v++
	}
	for v < len(text) && (text[v] == ' ' || text[v] == '\t') {
		v++
	}
	if v < len(text) && (text[v] == '"' || text[v] == '\'' || text[v] == '`') {
		quote = text[v]
		v++
	}
	return v, quote
}

// valueAfter is the value an assignment operator at text[op] (=, :, :=
// or =>) assigns, and where it ends. A quoted value runs to its closing
// quote (spaces and signs included), an unquoted one to white space or a
// sign that ends values in code; ok is false for one over 256 bytes and
// for a call ("getToken()").
func valueAfter(text string, op int) (value string, end int, ok bool) {
	v, quote := valueStart(text, op)
	ends := func(c byte) bool {
		if quote == 0 {
			return valueStop[c]
		}
		return c == quote || c == '\n'
	}
	end = v
	for end < len(text) && end-v <= 256 && !ends(text[end]) {
		end++
	}
	if end-v > 256 {
		return "", 0, false
	}
	if quote != 0 {
		return text[v:end], end, true
	}
	if end < len(text) && text[end] == '(' {
		return "", 0, false
	}
	return strings.TrimRight(text[v:end], ".:"), end, true
}

func keyByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '.' || b == '-'
}

// secretKey reports a key that names a secret (see strongKeys).
func secretKey(key string) bool {
	hasKey, qualified := false, false
	for _, w := range keyWords(key) {
		for _, s := range strongKeys {
			if w == s || len(s) >= 5 && strings.HasSuffix(w, s) {
				return true
			}
		}
		for _, q := range keyQualifiers {
			if w == q+"key" || w == q+"keys" {
				return true
			}
			qualified = qualified || w == q
		}
		hasKey = hasKey || w == "key" || w == "keys"
	}
	return hasKey && qualified
}

// keyWords splits a key name into its lower-case words: at "_", "-" and
// ".", and where camelCase starts a word ("dbPassword", "APIKey").
func keyWords(key string) []string {
	var words []string
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(key[start:end]))
		}
		start = end
	}
	for i := 0; i < len(key); i++ {
		c := rune(key[i])
		switch {
		case c == '_' || c == '-' || c == '.':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(c) && (unicode.IsLower(rune(key[i-1])) || unicode.IsDigit(rune(key[i-1])) ||
			i+1 < len(key) && unicode.IsLower(rune(key[i+1])) && unicode.IsUpper(rune(key[i-1]))):
			flush(i)
		}
	}
	flush(len(key))
	return words
}

// valueStop ends an unquoted value.
var valueStop = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n\"'`,;<>(){}[]") {
		t[c] = true
	}
	return t
}()

// nameOrNumber reports a value of letters and separators alone (a name
// or path) or of digits and separators alone (a number, version or time).
func nameOrNumber(v string) bool {
	name, number := true, true
	for i := 0; i < len(v); i++ {
		c := v[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit := c >= '0' && c <= '9'
		sep := c == '_' || c == '-' || c == '.' || c == '/' || c == ':'
		name = name && (letter || sep)
		number = number && (digit || c == '.' || c == ':' || c == '-')
	}
	return name || number
}

// secretLike reports a value that can hold a secret: not a variable or
// template ($X, %X%, {{x}}, <x>, @x, #x, &x, *x), not a name or path of
// letters alone (a reference such as process.env.TOKEN), not a number,
// version or time, not a placeholder.
func secretLike(v string) bool {
	if len(v) < MinValue || strings.IndexByte("$%{<@#&*", v[0]) >= 0 {
		return false
	}
	if nameOrNumber(v) {
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
