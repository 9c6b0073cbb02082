package server_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"wiki", true},
		{"a", true},
		{"jira_2", true},
		{"a" + strings.Repeat("b", limits.MaxServerNameLen-1), true},
		{"a" + strings.Repeat("b", limits.MaxServerNameLen), false},
		{"", false},
		{"Wiki", false},
		{"1wiki", false},
		{"_wiki", false},
		{"wi-ki", false},
		{"wiki ", false},
		{"wïki", false},
		{"wiki\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, err := server.ParseName(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseName(%q) = %v, want ok %v", tt.in, err, tt.ok)
			}
			if !tt.ok {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != "name" {
					t.Errorf("ParseName(%q) = %v, want a name field error", tt.in, err)
				}
				return
			}
			if n.String() != tt.in || n.IsZero() {
				t.Errorf("ParseName(%q) = %q", tt.in, n)
			}
		})
	}
}

func TestParseCredentialKind(t *testing.T) {
	tests := []struct {
		in   string
		want server.CredentialKind
		ok   bool
	}{
		{"none", server.KindNone, true},
		{"bearer", server.KindBearer, true},
		{"header", server.KindHeader, true},
		{"Bearer", server.CredentialKind{}, false},
		{"", server.CredentialKind{}, false},
		{"oauth", server.CredentialKind{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := server.ParseCredentialKind(tt.in)
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("ParseCredentialKind(%q) = %v, %v, want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			if tt.ok && got.String() != tt.in {
				t.Errorf("ParseCredentialKind(%q).String() = %q", tt.in, got)
			}
		})
	}
}

func TestNewBearer(t *testing.T) {
	tests := []struct {
		name  string
		token string
		hint  string
		ok    bool
	}{
		{name: "typical", token: "sk-live-abcdefghwxyz", hint: "Bearer …wxyz", ok: true},
		{name: "twelve", token: "abcdefghwxyz", hint: "Bearer …wxyz", ok: true},
		{name: "eleven hides", token: "abcdefgwxyz", hint: "Bearer …", ok: true},
		{name: "one", token: "x", hint: "Bearer …", ok: true},
		{name: "four", token: "wxyz", hint: "Bearer …", ok: true},
		{name: "max", token: strings.Repeat("a", limits.MaxCredentialLen), hint: "Bearer …aaaa", ok: true},
		{name: "symbols", token: "a.b-c_d~e+f/g=h!#$%", hint: "Bearer …!#$%", ok: true},
		{name: "empty", token: ""},
		{name: "too long", token: strings.Repeat("a", limits.MaxCredentialLen+1)},
		{name: "space", token: "abc def"},
		{name: "crlf", token: "abc\r\nX-Evil: 1"},
		{name: "lf", token: "abc\n"},
		{name: "nul", token: "abc\x00"},
		{name: "del", token: "abc\x7f"},
		{name: "tab", token: "abc\tdef"},
		{name: "unicode", token: "abcdéfghijkl"},
		{name: "unicode line separator", token: "abc\u2028def"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := server.NewBearer(tt.token)
			if (err == nil) != tt.ok {
				t.Fatalf("NewBearer(%q) = %v, want ok %v", tt.token, err, tt.ok)
			}
			if !tt.ok {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != "auth.token" {
					t.Errorf("NewBearer(%q) = %v, want an auth.token field error", tt.token, err)
				}
				if tt.token != "" && strings.Contains(err.Error(), tt.token) {
					t.Errorf("NewBearer error %q echoes the token", err)
				}
				return
			}
			if c.Kind() != server.KindBearer || c.Hint() != tt.hint || c.HeaderName() != "Authorization" || c.HeaderValue() != "Bearer "+tt.token {
				t.Errorf("NewBearer(%q) = kind %v hint %q header %q: %q, want hint %q", tt.token, c.Kind(), c.Hint(), c.HeaderName(), c.HeaderValue(), tt.hint)
			}
		})
	}
}

func TestNewHeader(t *testing.T) {
	tests := []struct {
		name, header, value string
		wantName, hint      string
		field               string // "" when ok
	}{
		{name: "typical", header: "x-api-key", value: "secret-value-wxyz", wantName: "x-api-key", hint: "x-api-key …wxyz"},
		{name: "mixed case", header: "X-Api-Key", value: "secret-value-wxyz", wantName: "x-api-key", hint: "x-api-key …wxyz"},
		{name: "inner space", header: "x-t", value: "a b c d e f g h", wantName: "x-t", hint: "x-t … g h"},
		{name: "short value", header: "x-t", value: "abc", wantName: "x-t", hint: "x-t …"},
		{name: "longest name", header: "x-" + strings.Repeat("a", 62), value: "v", wantName: "x-" + strings.Repeat("a", 62), hint: "x-" + strings.Repeat("a", 62) + " …"},
		{name: "name too long", header: "x-" + strings.Repeat("a", 63), value: "v", field: "auth.name"},
		{name: "bare prefix", header: "x-", value: "v", field: "auth.name"},
		{name: "authorization", header: "authorization", value: "v", field: "auth.name"},
		{name: "Authorization", header: "Authorization", value: "v", field: "auth.name"},
		{name: "cookie", header: "cookie", value: "v", field: "auth.name"},
		{name: "host", header: "host", value: "v", field: "auth.name"},
		{name: "proxy auth", header: "proxy-authorization", value: "v", field: "auth.name"},
		{name: "underscore", header: "x_api_key", value: "v", field: "auth.name"},
		{name: "x underscore", header: "x-api_key", value: "v", field: "auth.name"},
		{name: "colon", header: "x-a:b", value: "v", field: "auth.name"},
		{name: "crlf name", header: "x-a\r\nhost", value: "v", field: "auth.name"},
		{name: "kelvin sign", header: "x-\u212a", value: "v", field: "auth.name"},
		{name: "empty name", header: "", value: "v", field: "auth.name"},
		{name: "empty value", header: "x-a", value: "", field: "auth.value"},
		{name: "leading space", header: "x-a", value: " v", field: "auth.value"},
		{name: "trailing space", header: "x-a", value: "v ", field: "auth.value"},
		{name: "only space", header: "x-a", value: " ", field: "auth.value"},
		{name: "crlf value", header: "x-a", value: "v\r\nx-b: 1", field: "auth.value"},
		{name: "value too long", header: "x-a", value: strings.Repeat("v", limits.MaxCredentialLen+1), field: "auth.value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := server.NewHeader(tt.header, tt.value)
			if tt.field != "" {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != tt.field {
					t.Fatalf("NewHeader(%q, %q) = %v, want %s field error", tt.header, tt.value, err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewHeader(%q, %q) = %v", tt.header, tt.value, err)
			}
			if c.Kind() != server.KindHeader || c.HeaderName() != tt.wantName || c.HeaderValue() != tt.value || c.Hint() != tt.hint {
				t.Errorf("NewHeader(%q, %q) = %q: %q hint %q, want %q hint %q", tt.header, tt.value, c.HeaderName(), c.HeaderValue(), c.Hint(), tt.wantName, tt.hint)
			}
		})
	}
}

func TestCredentialNeverPrintsSecret(t *testing.T) {
	bearer, _ := server.NewBearer("supersecrettoken1234")
	header, _ := server.NewHeader("x-api-key", "supersecretvalue1234")
	for _, c := range []server.Credential{bearer, header, server.NoCredential(), {}} {
		for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
			out := fmt.Sprintf(format, c)
			if strings.Contains(out, "supersecret") {
				t.Errorf("Sprintf(%q, credential) = %q, leaks the secret", format, out)
			}
		}
	}
	if got := bearer.String(); got != "credential(bearer, Bearer …1234)" {
		t.Errorf("String() = %q", got)
	}
	if got := server.NoCredential().String(); got != "credential(none)" {
		t.Errorf("NoCredential().String() = %q", got)
	}
}

func TestNoCredential(t *testing.T) {
	c := server.NoCredential()
	if c.Kind() != server.KindNone || c.Hint() != "" || c.HeaderName() != "" || c.HeaderValue() != "" || c.IsZero() {
		t.Errorf("NoCredential() = %v %q %q %q", c.Kind(), c.Hint(), c.HeaderName(), c.HeaderValue())
	}
	var zero server.Credential
	if !zero.IsZero() {
		t.Errorf("zero Credential IsZero() = false")
	}
	if _, err := zero.MarshalSecret(); err == nil {
		t.Errorf("zero Credential MarshalSecret() = nil error")
	}
}

func TestCredentialSecretRoundTrip(t *testing.T) {
	bearer, _ := server.NewBearer("tok-abcdefghijkl")
	header, _ := server.NewHeader("X-Api-Key", "val-abcdefghijkl")
	for _, c := range []server.Credential{bearer, header, server.NoCredential()} {
		b, err := c.MarshalSecret()
		if err != nil {
			t.Fatalf("MarshalSecret() = %v", err)
		}
		got, err := server.UnmarshalCredentialSecret(b)
		if err != nil || got != c {
			t.Errorf("UnmarshalCredentialSecret(%s) = %v, %v, want %v", b, got, err, c)
		}
	}
}

func TestUnmarshalCredentialSecret(t *testing.T) {
	tests := []struct {
		in   string
		kind server.CredentialKind
		ok   bool
	}{
		{`{"type":"none"}`, server.KindNone, true},
		{`{"type":"bearer","token":"abc"}`, server.KindBearer, true},
		{`{"type":"header","name":"x-a","value":"v"}`, server.KindHeader, true},
		{`{"type":"none","token":"abc"}`, server.CredentialKind{}, false},
		{`{"type":"bearer","token":"abc","name":"x-a"}`, server.CredentialKind{}, false},
		{`{"type":"header","name":"x-a","value":"v","token":"t"}`, server.CredentialKind{}, false},
		{`{"type":"header","name":"authorization","value":"v"}`, server.CredentialKind{}, false},
		{`{"type":"bearer","token":"a\r\nb"}`, server.CredentialKind{}, false},
		{`{"type":"bearer"}`, server.CredentialKind{}, false},
		{`{"type":"oauth"}`, server.CredentialKind{}, false},
		{`{"type":"none","extra":1}`, server.CredentialKind{}, false},
		{`{"type":"none"} {"type":"none"}`, server.CredentialKind{}, false},
		{`not json`, server.CredentialKind{}, false},
		{``, server.CredentialKind{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := server.UnmarshalCredentialSecret([]byte(tt.in))
			if (err == nil) != tt.ok || got.Kind() != tt.kind {
				t.Errorf("UnmarshalCredentialSecret(%q) = %v, %v, want %v ok %v", tt.in, got.Kind(), err, tt.kind, tt.ok)
			}
		})
	}
}
