package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

// CredentialKind is the type of a server's static credential.
type CredentialKind struct{ s string }

// The credential kinds, spelt as the API's auth.type.
var (
	// KindNone: the server needs no credential.
	KindNone = CredentialKind{"none"}
	// KindBearer: Authorization: Bearer <token>.
	KindBearer = CredentialKind{"bearer"}
	// KindHeader: one x-* header with a static value.
	KindHeader = CredentialKind{"header"}
)

// ParseCredentialKind accepts exactly the API's auth types.
func ParseCredentialKind(s string) (CredentialKind, error) {
	switch s {
	case KindNone.s:
		return KindNone, nil
	case KindBearer.s:
		return KindBearer, nil
	case KindHeader.s:
		return KindHeader, nil
	case KindOAuthClientCredentials.s:
		return KindOAuthClientCredentials, nil
	case KindOAuthAuthorizationCode.s:
		return KindOAuthAuthorizationCode, nil
	}
	return CredentialKind{}, &field.Error{Field: "auth.type", Reason: "must be none, bearer, header, oauth_client_credentials or oauth_authorization_code"}
}

// String returns the kind as the API spells it ("" for the zero value).
func (k CredentialKind) String() string { return k.s }

// Credential is a server's static credential with its secret. It is kept
// in memory only between the API and the cipher, or for one review run;
// its String and GoString never show the secret, so a stray %v or %#v in a
// log cannot leak it.
type Credential struct {
	kind   CredentialKind
	name   string // header name, lowercase; empty for bearer and none
	secret string // token, header value or OAuth client secret
	oauth  *OAuth // the OAuth kinds only; never shared between values
}

// NoCredential is the credential of a server that needs none.
func NoCredential() Credential { return Credential{kind: KindNone} }

// NewBearer builds a bearer credential. The token is 1–limits.MaxCredentialLen
// visible ASCII characters without spaces, so "Bearer <token>" cannot be
// read as anything else.
func NewBearer(token string) (Credential, error) {
	if !validSecret(token, false) {
		return Credential{}, &field.Error{Field: "auth.token", Reason: secretReason(false)}
	}
	return Credential{kind: KindBearer, secret: token}, nil
}

// NewHeader builds a header credential. The name matches
// ^x-[a-z0-9-]{1,62}$ in any case and is stored lowercase: requiring the
// x- prefix rules out Authorization, Cookie, Host and every header with a
// meaning to HTTP or to proxies (MC2). The value is 1–limits.MaxCredentialLen
// printable ASCII characters (spaces allowed inside, not at either end,
// because servers trim them).
func NewHeader(name, value string) (Credential, error) {
	n := asciiLower(name)
	if !validHeaderName(n) {
		return Credential{}, &field.Error{Field: "auth.name", Reason: "must match ^x-[a-z0-9-]{1,62}$"}
	}
	if !validSecret(value, true) {
		return Credential{}, &field.Error{Field: "auth.value", Reason: secretReason(true)}
	}
	return Credential{kind: KindHeader, name: n, secret: value}, nil
}

// asciiLower folds A–Z only: strings.ToLower would turn the Kelvin sign
// into k and let a non-ASCII name through the pattern.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// maxHeaderNameLen is len("x-") plus the 62 characters of the pattern.
const maxHeaderNameLen = 64

func validHeaderName(n string) bool {
	if len(n) < 3 || len(n) > maxHeaderNameLen || !strings.HasPrefix(n, "x-") {
		return false
	}
	for i := 2; i < len(n); i++ {
		c := n[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

func validSecret(s string, spaces bool) bool {
	if len(s) < 1 || len(s) > limits.MaxCredentialLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' && spaces && i > 0 && i < len(s)-1 {
			continue
		}
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

func secretReason(spaces bool) string {
	what := "visible ASCII characters without spaces"
	if spaces {
		what = "printable ASCII characters, not starting or ending with a space"
	}
	return fmt.Sprintf("must be 1 to %d %s", limits.MaxCredentialLen, what)
}

// Kind returns the credential's kind.
func (c Credential) Kind() CredentialKind { return c.kind }

// IsZero reports whether c is the invalid zero Credential (not the same as
// [NoCredential]).
func (c Credential) IsZero() bool { return c.kind.s == "" }

// minRevealLen is the shortest secret whose last characters the hint shows:
// below it the shown characters would be a third or more of the secret.
const minRevealLen = 3 * limits.CredentialHintChars

// Hint is what views and logs show of a credential: "Bearer …wxyz" or
// "x-api-key …wxyz". For a secret shorter than three times
// limits.CredentialHintChars no character is shown ("Bearer …"), because
// the tail would give away too much of it. NoCredential has the hint "".
func (c Credential) Hint() string {
	var label string
	switch c.kind {
	case KindBearer:
		label = "Bearer"
	case KindHeader:
		label = c.name
	case KindOAuthClientCredentials, KindOAuthAuthorizationCode:
		if c.secret == "" {
			return ""
		}
		label = "client_secret"
	default:
		return ""
	}
	if len(c.secret) < minRevealLen {
		return label + " …"
	}
	return label + " …" + c.secret[len(c.secret)-limits.CredentialHintChars:]
}

// HeaderName is the HTTP header that carries the credential
// ("Authorization" for bearer, the x-* name for header, "" for none and
// for the OAuth kinds, whose access tokens the transport fetches).
func (c Credential) HeaderName() string {
	switch c.kind {
	case KindBearer:
		return "Authorization"
	case KindHeader:
		return c.name
	}
	return ""
}

// HeaderValue is the value of [Credential.HeaderName]: "Bearer <token>" or
// the header value; "" for none. The caller must send it only to the
// server's configured origin (MC2).
func (c Credential) HeaderValue() string {
	switch c.kind {
	case KindBearer:
		return "Bearer " + c.secret
	case KindHeader:
		return c.secret
	}
	return ""
}

// String shows the kind and the hint, never the secret.
func (c Credential) String() string {
	if c.kind == KindNone || c.IsZero() {
		return "credential(" + c.kind.s + ")"
	}
	return "credential(" + c.kind.s + ", " + c.Hint() + ")"
}

// GoString is String, so %#v does not print the secret either.
func (c Credential) GoString() string { return c.String() }

// secretJSON is the plaintext that the cipher adapter encrypts. Its field
// names follow the API's auth object.
type secretJSON struct {
	Type  string `json:"type"`
	Token string `json:"token,omitempty"`
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
	// The OAuth kinds.
	TokenURL     string     `json:"tokenUrl,omitempty"`
	ClientID     string     `json:"clientId,omitempty"`
	ClientSecret string     `json:"clientSecret,omitempty"`
	ClientAuth   string     `json:"clientAuth,omitempty"`
	Registered   bool       `json:"registered,omitempty"`
	Scopes       []string   `json:"scopes,omitempty"`
	Issuer       string     `json:"issuer,omitempty"`
	RefreshToken string     `json:"refreshToken,omitempty"`
	AccessToken  string     `json:"accessToken,omitempty"`
	AccessExp    *time.Time `json:"accessExpiresAt,omitempty"`
	ConnectedBy  string     `json:"connectedBy,omitempty"`
	ConnectedAt  *time.Time `json:"connectedAt,omitempty"`
}

// MarshalSecret returns the credential as JSON, secret included, for the
// cipher adapter to encrypt (mcp_servers.encrypted_credentials). The
// result must never be stored or logged unencrypted.
func (c Credential) MarshalSecret() ([]byte, error) {
	j := secretJSON{Type: c.kind.s}
	switch c.kind {
	case KindNone:
	case KindBearer:
		j.Token = c.secret
	case KindHeader:
		j.Name, j.Value = c.name, c.secret
	case KindOAuthClientCredentials, KindOAuthAuthorizationCode:
		o := c.oauth
		if o == nil {
			return nil, &field.Error{Field: "auth", Reason: "is required"}
		}
		if !o.TokenURL.IsZero() {
			j.TokenURL = o.TokenURL.String()
		}
		j.ClientID, j.ClientSecret, j.Scopes, j.ClientAuth, j.Registered = o.ClientID, o.ClientSecret, o.Scopes, string(o.ClientAuth), o.Registered
		j.Issuer, j.RefreshToken, j.ConnectedBy = o.Issuer, o.RefreshToken, o.ConnectedBy
		if !o.ConnectedAt.IsZero() {
			at := o.ConnectedAt
			j.ConnectedAt = &at
		}
		if o.AccessToken != "" {
			exp := o.AccessExpiresAt
			j.AccessToken, j.AccessExp = o.AccessToken, &exp
		}
	default:
		return nil, &field.Error{Field: "auth", Reason: "is required"}
	}
	return json.Marshal(j)
}

// UnmarshalCredentialSecret rebuilds a credential from the decrypted JSON
// of [Credential.MarshalSecret]. Unlike the other Unmarshal functions it
// validates again: the secret goes into an HTTP header, so a value that
// could inject a header must not get there even from the database.
func UnmarshalCredentialSecret(b []byte) (Credential, error) {
	var j secretJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil || d.More() {
		return Credential{}, &field.Error{Field: "auth", Reason: "stored credential is malformed"}
	}
	oauthSet := j.TokenURL != "" || j.ClientID != "" || j.ClientSecret != "" || j.Scopes != nil || j.connectionSet()
	staticSet := j.Token != "" || j.Name != "" || j.Value != ""
	switch j.Type {
	case KindOAuthClientCredentials.s, KindOAuthAuthorizationCode.s:
		if staticSet {
			break
		}
		return unmarshalOAuth(j)
	}
	if oauthSet {
		return Credential{}, &field.Error{Field: "auth", Reason: "stored credential is malformed"}
	}
	switch j.Type {
	case KindNone.s:
		if staticSet {
			break
		}
		return NoCredential(), nil
	case KindBearer.s:
		if j.Name != "" || j.Value != "" {
			break
		}
		return NewBearer(j.Token)
	case KindHeader.s:
		if j.Token != "" {
			break
		}
		return NewHeader(j.Name, j.Value)
	}
	return Credential{}, &field.Error{Field: "auth", Reason: "stored credential is malformed"}
}

// connectionSet reports a field only a connection or an issuer sets.
func (j secretJSON) connectionSet() bool {
	return j.Issuer != "" || j.RefreshToken != "" || j.ConnectedBy != "" || j.ConnectedAt != nil || j.AccessToken != "" || j.AccessExp != nil
}

// unmarshalOAuth rebuilds an OAuth credential through its constructors,
// so a stored value obeys the same rules as a new one.
func unmarshalOAuth(j secretJSON) (Credential, error) {
	if j.Type != KindOAuthClientCredentials.s {
		return unmarshalCodeFlow(j)
	}
	malformed := &field.Error{Field: "auth", Reason: "stored credential is malformed"}
	if j.RefreshToken != "" || j.ConnectedBy != "" || j.ConnectedAt != nil || j.AccessToken != "" || j.AccessExp != nil || j.Registered {
		return Credential{}, malformed
	}
	c, err := NewOAuthClientCredentials(j.TokenURL, j.ClientID, j.ClientSecret, j.Scopes, j.ClientAuth, j.Issuer)
	if err != nil {
		return Credential{}, malformed
	}
	return c, nil
}

// unmarshalCodeFlow is unmarshalOAuth of an authorization-code credential:
// the issuer the admin named, a registration or a connection pinned.
func unmarshalCodeFlow(j secretJSON) (Credential, error) {
	malformed := &field.Error{Field: "auth", Reason: "stored credential is malformed"}
	c, err := newOAuthAuthorizationCode(j.ClientID, j.ClientSecret, j.Issuer, j.Scopes, j.ClientAuth)
	if err != nil || j.Registered && (j.ClientID == "" || j.Issuer == "") {
		return Credential{}, malformed
	}
	c.oauth.Registered = j.Registered
	if j.RefreshToken == "" && j.AccessToken == "" {
		if j.TokenURL != "" || j.ConnectedBy != "" || j.ConnectedAt != nil || j.AccessExp != nil {
			return Credential{}, malformed
		}
		return c, nil
	}
	u, err := ParseURL(j.TokenURL)
	if err != nil || j.ConnectedAt == nil {
		return Credential{}, malformed
	}
	switch {
	case j.RefreshToken != "" && j.AccessToken == "" && j.AccessExp == nil:
		c, err = c.WithConnection(j.Issuer, u, j.RefreshToken, j.ConnectedBy, *j.ConnectedAt)
	case j.RefreshToken == "" && j.AccessExp != nil:
		c, err = c.WithAccessOnlyConnection(j.Issuer, u, j.AccessToken, *j.AccessExp, j.ConnectedBy, *j.ConnectedAt)
	default:
		return Credential{}, malformed
	}
	if err != nil {
		return Credential{}, malformed
	}
	return c, nil
}
