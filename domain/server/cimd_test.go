package server

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestClientMetadataDocument: the document for a public URL, with and
// without signing keys, byte for byte; the same inputs give the same
// bytes (no tenant, no clock, nothing random in it).
func TestClientMetadataDocument(t *testing.T) {
	tests := []struct {
		name, publicURL string
		signs           bool
		want            string
	}{
		{"signing keys", "https://review.example.com", true,
			`{"client_id":"https://review.example.com/oauth/client-metadata.json","client_name":"CodeLotse",` +
				`"client_uri":"https://review.example.com","redirect_uris":["https://review.example.com/ui/oauth/callback"],` +
				`"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"application_type":"web",` +
				`"token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://review.example.com/oauth/jwks.json"}`},
		{"no signing keys", "https://review.example.com", false,
			`{"client_id":"https://review.example.com/oauth/client-metadata.json","client_name":"CodeLotse",` +
				`"client_uri":"https://review.example.com","redirect_uris":["https://review.example.com/ui/oauth/callback"],` +
				`"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"application_type":"web",` +
				`"token_endpoint_auth_method":"none"}`},
		{"a port", "https://review.example.com:8443", true,
			`{"client_id":"https://review.example.com:8443/oauth/client-metadata.json","client_name":"CodeLotse",` +
				`"client_uri":"https://review.example.com:8443","redirect_uris":["https://review.example.com:8443/ui/oauth/callback"],` +
				`"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"application_type":"web",` +
				`"token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://review.example.com:8443/oauth/jwks.json"}`},
		{"an IPv6 address", "https://[2001:db8::1]", false,
			`{"client_id":"https://[2001:db8::1]/oauth/client-metadata.json","client_name":"CodeLotse",` +
				`"client_uri":"https://[2001:db8::1]","redirect_uris":["https://[2001:db8::1]/ui/oauth/callback"],` +
				`"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"application_type":"web",` +
				`"token_endpoint_auth_method":"none"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClientMetadataDocument(tt.publicURL, tt.signs)
			if err != nil {
				t.Fatalf("ClientMetadataDocument(%q, %v) = %v", tt.publicURL, tt.signs, err)
			}
			if string(got) != tt.want {
				t.Errorf("ClientMetadataDocument(%q, %v) =\n%s\nwant\n%s", tt.publicURL, tt.signs, got, tt.want)
			}
			again, _ := ClientMetadataDocument(tt.publicURL, tt.signs)
			if string(again) != string(got) {
				t.Errorf("the same inputs gave two documents:\n%s\n%s", got, again)
			}
			id, ok := ClientMetadataURL(tt.publicURL)
			if !ok || id != tt.publicURL+ClientMetadataPath {
				t.Errorf("ClientMetadataURL(%q) = %q, %v", tt.publicURL, id, ok)
			}
			var doc map[string]any
			if err := json.Unmarshal(got, &doc); err != nil || doc["client_id"] != id {
				t.Errorf("client_id %v, want ClientMetadataURL's %q (%v)", doc["client_id"], id, err)
			}
		})
	}
}

// TestClientMetadataDocumentHoldsNoSecret: the document's members are
// the fixed public ones; nothing named like a secret or a key, no inline
// jwks (the keys are only at jwks_uri), and no jwks_uri without keys.
func TestClientMetadataDocumentHoldsNoSecret(t *testing.T) {
	public := []string{"application_type", "client_id", "client_name", "client_uri", "grant_types",
		"redirect_uris", "response_types", "token_endpoint_auth_method"}
	for _, signs := range []bool{true, false} {
		b, err := ClientMetadataDocument("https://review.example.com", signs)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		want := public
		if signs {
			want = append(slices.Clone(public), "jwks_uri")
		}
		slices.Sort(want)
		if got := slices.Sorted(maps.Keys(doc)); !slices.Equal(got, want) {
			t.Errorf("signs %v: members %v, want %v", signs, got, want)
		}
		for k := range doc {
			for _, word := range []string{"secret", "password", "token\"", "private", "jwks\""} {
				if strings.Contains(k+"\"", word) {
					t.Errorf("signs %v: member %q looks like a secret", signs, k)
				}
			}
		}
		if method := doc["token_endpoint_auth_method"]; (method == "private_key_jwt") != signs || (method == "none") == signs {
			t.Errorf("signs %v: token_endpoint_auth_method %v", signs, method)
		}
	}
}

// TestClientMetadataDocumentRefusesNonHTTPSOrigins: only an https origin
// in its canonical spelling has a document and a client id URL.
func TestClientMetadataDocumentRefusesNonHTTPSOrigins(t *testing.T) {
	for _, publicURL := range []string{
		"http://review.example.com",
		"http://127.0.0.1:8080",
		"",
		"review.example.com",
		"//review.example.com",
		"ftp://review.example.com",
		"HTTPS://review.example.com",
		"https://Review.Example.com",
		"https://review.example.com/",
		"https://review.example.com/ui",
		"https://review.example.com?x=1",
		"https://review.example.com?",
		"https://review.example.com#top",
		"https://me@review.example.com",
		"https://@review.example.com",
		"https://",
		"https://:443",
		"https://review.example.com:",
		" https://review.example.com",
		"https://review.example.com ",
		"https:review.example.com",
		"https://review.example.com/%2e",
	} {
		if b, err := ClientMetadataDocument(publicURL, true); !errors.Is(err, ErrPublicURLNotHTTPS) || b != nil {
			t.Errorf("ClientMetadataDocument(%q) = %s, %v; want ErrPublicURLNotHTTPS", publicURL, b, err)
		}
		if id, ok := ClientMetadataURL(publicURL); ok || id != "" {
			t.Errorf("ClientMetadataURL(%q) = %q, %v; want none", publicURL, id, ok)
		}
	}
}
