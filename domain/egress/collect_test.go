package egress

import (
	"slices"
	"strings"
	"testing"
)

func TestCollect(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"env file", "DB_PASSWORD=hunter2hunter2\n", []string{"hunter2hunter2"}},
		{"quoted", `password = "Winter2026!prod"`, []string{"Winter2026!prod"}},
		{"JSON", `{"api_key": "q8Zr2Lm5Xw7Kp3Vn"}`, []string{"q8Zr2Lm5Xw7Kp3Vn"}},
		{"Go", `token := "abc123def456"`, []string{"abc123def456"}},
		{"arrow", `:secret => 'Pa$$w0rd-2026'`, []string{"Pa$$w0rd-2026"}},
		{"YAML, key in any case", "  clientSecret: 7f9c2ba4e88f827d", []string{"7f9c2ba4e88f827d"}},
		{"trailing period of prose", "the api_key: k3yV4lue2026.", []string{"k3yV4lue2026"}},
		{"camelCase", `apiKey: "q8Zr2Lm5Xw7Kp3Vn"`, []string{"q8Zr2Lm5Xw7Kp3Vn"}},
		{"upper-case acronym", `APIKey = "q8Zr2Lm5Xw7Kp3Vn"`, []string{"q8Zr2Lm5Xw7Kp3Vn"}},
		{"a qualifier anywhere", `AWS_ACCESS_KEY_ID=AKIAZ7Q4KXG2M3NB5WJ6`, []string{"AKIAZ7Q4KXG2M3NB5WJ6"}},
		{"a word ending in a strong one", `accessToken: "9fQ2mZ7xK4pL1vB8"`, []string{"9fQ2mZ7xK4pL1vB8"}},
		{"quoted, with spaces and signs", `password = "p@ss w0rd!2024-xyz"`, []string{"p@ss w0rd!2024-xyz"}},
		{"quoted, with a comma", `"secret": "s3cr3t,Pa55phrase!"`, []string{"s3cr3t,Pa55phrase!"}},
		{"a DSN keeps its password and path", `DATABASE_DSN=postgres://app:Zq8vK2mP9xL4@db.internal/orders`, []string{"app:Zq8vK2mP9xL4/orders"}},
		{"a private key on one line", `"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nhkiG9w0BAQEF\n-----END PRIVATE KEY-----\n"`, []string{"MIIEvQIBADANBgkq\nhkiG9w0BAQEF\n"}},
		{"author is no auth", `author: "Jane Doe 2024x"`, nil},
		{"a cache key", `cacheKey: "orders:v2:summary"`, nil},
		{"a key id", `keyId: 550e8400-e29b-41d4-a716-446655440000`, nil},
		{"a ticket's key", `{"key": "PROJ-12345", "summary": "login fails"}`, nil},
		{"passthrough is no pass", `passthroughMode: enabled2024`, nil},
		{"a variable", `secret: ${VAULT_SECRET}`, nil},
		{"a template", `token: {{ .Values.token }}`, nil},
		{"a call", `token = getToken2()`, nil},
		{"a reference of letters", `auth: process.env.AUTH_TOKEN`, nil},
		{"a number", `timeout_key: 3000000000`, nil},
		{"a version", `key_version: 1.22.3-4`, nil},
		{"a placeholder", `password: changeme123`, nil},
		{"a name", `access: public-read-write`, nil},
		{"too short", `token: abc123`, nil},
		{"no secret-named key", `region = "eu-west-1a2b3"`, nil},
		{"prose", "the token: please rotate it", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Collect(tt.text, nil); !slices.Equal(got, tt.want) {
				t.Errorf("Collect(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestCollectKeepsTheSecretPartOfFindings: what every value of a kind
// shares (armor lines, a webhook's host) is not kept, so an ordinary term
// that names the kind is no fragment; the rest is.
func TestCollectKeepsTheSecretPartOfFindings(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9\n-----END RSA PRIVATE KEY-----"
	hook := "https://hooks.slack.com/services/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"
	text := "key " + pem + " hook " + hook
	spans := []Span{{4, 4 + len(pem)}, {len(text) - len(hook), len(text)}, {-1, 3}, {5, 2}, {0, len(text) + 1}}
	got := Collect(text, spans)
	want := []string{"MIIEowIBAAKCAQEA7bq9", "/services/T0A1B2C3D/B4E5F6G7H/q8Zr2Lm5Xw7Kp3VnYt6Ws1Qa"}
	if !slices.Equal(got, want) {
		t.Fatalf("Collect = %q, want %q (spans out of range ignored)", got, want)
	}
	tk := NewTaint()
	tk.Add(got...)
	for _, ordinary := range []string{"BEGIN RSA PRIVATE KEY", "hooks.slack.com/services"} {
		if !check(tk, ordinary) {
			t.Errorf("%q blocked", ordinary)
		}
	}
	if check(tk, strings.ToLower("MIIEowIBAAKCAQEA")) {
		t.Error("a piece of the key's body admitted")
	}
}

// TestFold: case, separators, invisible characters and look-alikes are
// gone; "I", "i", "l" and "1" are one letter, "0" and "o" another; a tag
// character is the ASCII it mirrors.
func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"AKIA-Z7Q4", "aklaz7q4"},
		{"akia z7q4", "aklaz7q4"},
		{"AK1A|z7Q4", "aklaz7q4"},
		{"\u0410KI\u0410Z7Q4", "aklaz7q4"},   // Cyrillic А
		{"ＡＫＩＡＺ７Ｑ４", "aklaz7q4"},             // fullwidth (NFKC)
		{"AK\u200bIA\u202eZ7Q4", "aklaz7q4"}, // zero-width space, bidi override
		{"M0m", "mom"},
		{"\U000E0041\U000E004B", "ak"}, // tag characters read as ASCII
		{"\xff", ""},
	}
	for _, tt := range tests {
		if got := string(Fold(tt.in)); got != tt.want {
			t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
