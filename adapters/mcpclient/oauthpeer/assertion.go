package oauthpeer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client authentication with private_key_jwt (RFC 7523 §2.2, as
// draft-ietf-oauth-rfc7523bis tightens it). The peer checks every client
// assertion its token endpoint receives itself, before the provider sees
// the request, because zitadel's provider does not take an assertion for
// the client-credentials grant and never checks a jti:
//
//   - client_assertion_type is RFC 7523's jwt-bearer, and no other client
//     authentication (Basic header, client_secret) comes with it;
//   - a JWS in the compact serialization, alg ES256 or EdDSA, one
//     signature, a kid;
//   - the key of that kid among the client's keys: Options.KeyClients, or
//     the jwks_uri of the client's metadata document (fetched, see
//     cimd.go); the signature verifies with it;
//   - iss and sub are the client id (and the form's client_id, when sent,
//     is the same); aud is exactly the peer's issuer (a string, or an
//     array of that one string);
//   - exp is in the future, iat is not (AssertionClockSkew), the assertion
//     lives at most MaxAssertionLifetime, nbf (if any) is past;
//   - jti is present and was never seen before for that client (a replay
//     is refused).
//
// A refused assertion is answered 401 invalid_client and the request goes
// no further. A verified one goes on to the provider, marked verified in
// its context: the client-credentials grant then issues the key client's
// token (peerStorage.ClientCredentials); the code and refresh grants
// verify the assertion once more through zitadel's own
// AuthorizePrivateJWTKey (peerStorage.GetKeyByIDAndClientID).

const (
	// JWTBearer is RFC 7523's client_assertion_type.
	JWTBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// MaxAssertionLifetime is the longest exp - iat the peer accepts.
	MaxAssertionLifetime = 5 * time.Minute
	// AssertionClockSkew is how far in the future an iat or nbf may be.
	AssertionClockSkew = 10 * time.Second
)

// Assertion is one client assertion the token endpoint received and what
// the peer found.
type Assertion struct {
	// ClientID is the assertion's iss ("" when it could not be read).
	ClientID string
	// Header and Claims are the JWT's header and claims as decoded (nil
	// when they could not be read); they are recorded before any check.
	Header map[string]any
	Claims map[string]any
	// Raw is the assertion as sent.
	Raw string
	// Err is why the peer refused it; "" when it verified.
	Err string
}

// Assertions are the client assertions the token endpoint received, in
// order, with the peer's verdict.
func (p *Peer) Assertions() []Assertion {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Assertion(nil), p.assertions...)
}

// verifiedClient is the context key of a request whose client assertion
// the peer verified; its value is the client id.
type verifiedClient struct{}

func verifiedClientOf(ctx context.Context) string {
	id, _ := ctx.Value(verifiedClient{}).(string)
	return id
}

// tokenEndpoint checks the client assertion of a token request, if it
// carries one, before next (the provider) sees it.
func (p *Peer) tokenEndpoint(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
			return
		}
		if !r.PostForm.Has("client_assertion") && !r.PostForm.Has("client_assertion_type") {
			next.ServeHTTP(w, r)
			return
		}
		_, _, basic := r.BasicAuth()
		a := p.checkAssertion(r.Context(), r.PostForm, basic)
		p.mu.Lock()
		p.assertions = append(p.assertions, a)
		p.mu.Unlock()
		if a.Err != "" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedClient{}, a.ClientID)))
	})
}

// checkAssertion verifies the assertion of form; see the file's comment.
func (p *Peer) checkAssertion(ctx context.Context, form url.Values, basic bool) (a Assertion) {
	a.Raw = form.Get("client_assertion")
	refuse := func(format string, args ...any) Assertion {
		a.Err = fmt.Sprintf(format, args...)
		return a
	}
	if parts := strings.Split(a.Raw, "."); len(parts) == 3 {
		a.Header, _ = decodeSegment(parts[0])
		a.Claims, _ = decodeSegment(parts[1])
		a.ClientID, _ = a.Claims["iss"].(string)
	}
	switch {
	case form.Get("client_assertion_type") != JWTBearer:
		return refuse("client_assertion_type is not %s", JWTBearer)
	case a.Raw == "":
		return refuse("no client_assertion")
	case basic || form.Has("client_secret"):
		return refuse("more than one client authentication method")
	}
	jws, err := jose.ParseSignedCompact(a.Raw, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		return refuse("not a compact JWS signed with ES256 or EdDSA: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return refuse("not exactly one signature")
	}
	kid := jws.Signatures[0].Protected.KeyID
	if kid == "" {
		return refuse("no kid")
	}
	if id := form.Get("client_id"); id != "" && id != a.ClientID {
		return refuse("client_id %q is not the assertion's iss %q", id, a.ClientID)
	}
	key, err := p.clientKey(ctx, a.ClientID, kid)
	if err != nil {
		return refuse("no key %q for client %q: %v", kid, a.ClientID, err)
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return refuse("signature: %v", err)
	}
	var c struct {
		Iss string          `json:"iss"`
		Sub string          `json:"sub"`
		Aud json.RawMessage `json:"aud"`
		Jti string          `json:"jti"`
		Exp *int64          `json:"exp"`
		Iat *int64          `json:"iat"`
		Nbf *int64          `json:"nbf"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return refuse("claims: %v", err)
	}
	now := time.Now()
	skew := int64(AssertionClockSkew / time.Second)
	switch {
	case c.Iss == "" || c.Iss != a.ClientID:
		return refuse("iss %q is not the client", c.Iss)
	case c.Sub != c.Iss:
		return refuse("sub %q is not iss %q", c.Sub, c.Iss)
	case !audienceIs(c.Aud, p.Issuer):
		return refuse("aud %s is not the issuer %s", c.Aud, p.Issuer)
	case c.Exp == nil || *c.Exp <= now.Unix():
		return refuse("expired or no exp")
	case c.Iat == nil || *c.Iat > now.Unix()+skew:
		return refuse("no iat, or iat in the future")
	case *c.Exp-*c.Iat > int64(MaxAssertionLifetime/time.Second):
		return refuse("lives longer than %s", MaxAssertionLifetime)
	case c.Nbf != nil && *c.Nbf > now.Unix()+skew:
		return refuse("not yet valid (nbf)")
	case c.Jti == "":
		return refuse("no jti")
	}
	seen := c.Iss + "\x00" + c.Jti
	p.mu.Lock()
	replay := p.jtis[seen]
	p.jtis[seen] = true
	p.mu.Unlock()
	if replay {
		return refuse("jti replayed")
	}
	return a
}

// audienceIs reports whether a JWT's aud is exactly issuer: the string,
// or an array holding it alone.
func audienceIs(raw json.RawMessage, issuer string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == issuer
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && len(many) == 1 && many[0] == issuer
}

func decodeSegment(s string) (map[string]any, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// clientKey is the public key kid of the client id: from
// Options.KeyClients, else from the jwks_uri of its metadata document.
func (p *Peer) clientKey(ctx context.Context, clientID, kid string) (*jose.JSONWebKey, error) {
	if set, ok := p.store.keyClients[clientID]; ok {
		return keyOf(set, kid)
	}
	if p.documents != nil && isDocumentURL(clientID) {
		return p.documents.key(ctx, clientID, kid)
	}
	return nil, errors.New("not a private_key_jwt client of this peer")
}

// keyOf is the one public key kid of set.
func keyOf(set jose.JSONWebKeySet, kid string) (*jose.JSONWebKey, error) {
	keys := set.Key(kid)
	if len(keys) != 1 {
		return nil, fmt.Errorf("%d keys with that kid", len(keys))
	}
	if !keys[0].IsPublic() {
		return nil, errors.New("the key set holds a private key")
	}
	return &keys[0], nil
}

// methodClient is a client of the example storage with another
// authentication method and, when grants is set, other grants.
type methodClient struct {
	op.Client
	method oidc.AuthMethod
	grants []oidc.GrantType
}

func (c methodClient) AuthMethod() oidc.AuthMethod { return c.method }

func (c methodClient) GrantTypes() []oidc.GrantType {
	if c.grants != nil {
		return c.grants
	}
	return c.Client.GrantTypes()
}

// keyClient is the client-credentials client id of Options.KeyClients.
func keyClient(id string) op.Client {
	return methodClient{Client: storage.WebClient(id, ""), method: oidc.AuthMethodPrivateKeyJWT,
		grants: []oidc.GrantType{oidc.GrantTypeClientCredentials}}
}

// ClientCredentials is the example storage's, and for a key client the
// client itself when the request's assertion verified (a key client has
// no secret: without a verified assertion it is refused).
func (s *peerStorage) ClientCredentials(ctx context.Context, clientID, clientSecret string) (op.Client, error) {
	if id := verifiedClientOf(ctx); id != "" && (clientID == "" || clientID == id) {
		if _, ok := s.keyClients[id]; ok {
			return keyClient(id), nil
		}
	}
	if _, ok := s.keyClients[clientID]; ok {
		return nil, errors.New("this client authenticates with private_key_jwt")
	}
	return s.Storage.ClientCredentials(ctx, clientID, clientSecret)
}

// ClientCredentialsTokenRequest is the example storage's, and for a key
// client a token request for it.
func (s *peerStorage) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	if clientID == "" {
		clientID = verifiedClientOf(ctx)
	}
	if _, ok := s.keyClients[clientID]; ok && verifiedClientOf(ctx) == clientID {
		return &oidc.JWTTokenRequest{Subject: clientID, Audience: []string{clientID}, Scopes: scopes}, nil
	}
	return s.Storage.ClientCredentialsTokenRequest(ctx, clientID, scopes)
}

// GetKeyByIDAndClientID is the key zitadel's own assertion check uses
// (code and refresh grants): a key client's or a metadata document's,
// else the example storage's.
func (s *peerStorage) GetKeyByIDAndClientID(ctx context.Context, keyID, clientID string) (*jose.JSONWebKey, error) {
	if _, ok := s.keyClients[clientID]; ok || (s.peer.documents != nil && isDocumentURL(clientID)) {
		return s.peer.clientKey(ctx, clientID, keyID)
	}
	return s.Storage.GetKeyByIDAndClientID(ctx, keyID, clientID)
}
