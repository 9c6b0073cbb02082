package oauthpeer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func jwksOf(kid string, k *ecdsa.PrivateKey) jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}}}
}

// sign is a compact ES256 JWS of claims under kid.
func sign(t *testing.T, k *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// claimsFor are valid claims of clientID's assertion for aud, with a
// fresh jti.
func claimsFor(clientID, aud string) map[string]any {
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	now := time.Now().Unix()
	return map[string]any{"iss": clientID, "sub": clientID, "aud": aud, "jti": base64.RawURLEncoding.EncodeToString(jti), "iat": now, "exp": now + 60}
}

// asClient reaches the peer's authorization server whatever the name.
func asClient(p *Peer) *http.Client { return dialing(p, p.as) }

// dialing is a client trusting p's servers that dials srv for any name.
func dialing(p *Peer, srv *httptest.Server) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: p.Pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}}
}

func postToken(t *testing.T, p *Peer, form url.Values, basic bool) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth("cc-jwt", "x")
	}
	resp, err := asClient(p).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func assertionForm(clientID, assertion string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_assertion_type": {JWTBearer},
		"client_assertion": {assertion}, "scope": {"openid"}}
}

// TestPrivateKeyJWTClientCredentials: a key client gets a token the MCP
// server accepts with a valid assertion, and every deviation of the
// assertion is refused (401 invalid_client) with its reason recorded.
func TestPrivateKeyJWTClientCredentials(t *testing.T) {
	key, other := newKey(t), newKey(t)
	p := Start(t, Options{KeyClients: map[string]jose.JSONWebKeySet{"cc-jwt": jwksOf("k1", key)}})

	good := sign(t, key, "k1", claimsFor("cc-jwt", p.Issuer))
	status, body := postToken(t, p, assertionForm("cc-jwt", good), false)
	tok, _ := body["access_token"].(string)
	if status != http.StatusOK || tok == "" {
		t.Fatalf("a valid assertion = %d %v", status, body)
	}
	if _, err := p.verify(context.Background(), tok, nil); err != nil {
		t.Errorf("the MCP server refuses the key client's token: %v", err)
	}
	if a := p.Assertions(); len(a) != 1 || a[0].Err != "" || a[0].ClientID != "cc-jwt" || a[0].Header["kid"] != "k1" {
		t.Errorf("verdicts = %+v", a)
	}

	with := func(edit func(map[string]any)) string {
		c := claimsFor("cc-jwt", p.Issuer)
		edit(c)
		return sign(t, key, "k1", c)
	}
	now := time.Now().Unix()
	hs := func() string { // HS256 with the public key's bytes as the secret
		h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"k1","typ":"JWT"}`))
		c, _ := json.Marshal(claimsFor("cc-jwt", p.Issuer))
		in := h + "." + base64.RawURLEncoding.EncodeToString(c)
		m := hmac.New(sha256.New, []byte("k1"))
		m.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	for _, tc := range []struct {
		name      string
		form      url.Values
		basic     bool
		wantError string
	}{
		{"replayed", assertionForm("cc-jwt", good), false, "jti replayed"},
		{"audience the token URL", assertionForm("cc-jwt", with(func(c map[string]any) { c["aud"] = p.Issuer + "/oauth/token" })), false, "aud"},
		{"audience with another", assertionForm("cc-jwt", with(func(c map[string]any) { c["aud"] = []string{p.Issuer, "https://other.test"} })), false, "aud"},
		{"expired", assertionForm("cc-jwt", with(func(c map[string]any) { c["iat"], c["exp"] = now-120, now-60 })), false, "expired"},
		{"no exp", assertionForm("cc-jwt", with(func(c map[string]any) { delete(c, "exp") })), false, "expired"},
		{"issued in the future", assertionForm("cc-jwt", with(func(c map[string]any) { c["iat"], c["exp"] = now+120, now+180 })), false, "iat"},
		{"lives ten minutes", assertionForm("cc-jwt", with(func(c map[string]any) { c["exp"] = now + 600 })), false, "lives longer"},
		{"no jti", assertionForm("cc-jwt", with(func(c map[string]any) { delete(c, "jti") })), false, "no jti"},
		{"sub is not iss", assertionForm("cc-jwt", with(func(c map[string]any) { c["sub"] = "someone" })), false, "sub"},
		{"another client's id", assertionForm("sid1", good), false, "client_id"},
		{"another key", assertionForm("cc-jwt", sign(t, other, "k1", claimsFor("cc-jwt", p.Issuer))), false, "signature"},
		{"unknown kid", assertionForm("cc-jwt", sign(t, key, "k2", claimsFor("cc-jwt", p.Issuer))), false, "no key"},
		{"unknown client", assertionForm("nobody", sign(t, key, "k1", claimsFor("nobody", p.Issuer))), false, "not a private_key_jwt client"},
		{"HS256", assertionForm("cc-jwt", hs()), false, "not a compact JWS"},
		{"with a Basic header", assertionForm("cc-jwt", sign(t, key, "k1", claimsFor("cc-jwt", p.Issuer))), true, "more than one"},
		{"another assertion type", func() url.Values {
			f := assertionForm("cc-jwt", sign(t, key, "k1", claimsFor("cc-jwt", p.Issuer)))
			f.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:saml2-bearer")
			return f
		}(), false, "client_assertion_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.Assertions())
			status, body := postToken(t, p, tc.form, tc.basic)
			as := p.Assertions()[before:]
			if status != http.StatusUnauthorized || body["error"] != "invalid_client" || body["access_token"] != nil {
				t.Errorf("answer = %d %v, want 401 invalid_client", status, body)
			}
			if len(as) != 1 || !strings.Contains(as[0].Err, tc.wantError) {
				t.Errorf("verdicts = %+v, want one refused for %q", as, tc.wantError)
			}
		})
	}
	// Without an assertion a key client has no way in.
	status, body = postToken(t, p, url.Values{"grant_type": {"client_credentials"}, "client_id": {"cc-jwt"}, "client_secret": {""}}, false)
	if status == http.StatusOK || body["access_token"] != nil {
		t.Errorf("a key client without an assertion = %d %v", status, body)
	}
}

// docServer serves documents by path over TLS at localhost.
func docServer(t *testing.T, docs map[string]any) (origin string, client *http.Client) {
	t.Helper()
	pki, err := localpki.New("localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := docs[r.URL.Path]
		switch {
		case !ok:
			http.NotFound(w, r)
		case d == "redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(d)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	return "https://localhost:" + port, &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pki.Pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// TestClientIDMetadataDocuments: the metadata announces documents; a
// document is accepted only when its client_id is its URL and its method
// is none or private_key_jwt with a JWK set of public keys; the URL's
// rules hold before anything is fetched; redirects are not followed; a
// private_key_jwt document's assertions verify against its jwks_uri.
func TestClientIDMetadataDocuments(t *testing.T) {
	key := newKey(t)
	var origin string
	docs := map[string]any{}
	origin, client := docServer(t, docs)
	doc := func(path string, edit func(map[string]any)) string {
		m := map[string]any{"client_id": origin + path, "redirect_uris": []string{"https://app.test/callback"},
			"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"}
		if edit != nil {
			edit(m)
		}
		docs[path] = m
		return origin + path
	}
	priv := jwksOf("k1", key)
	priv.Keys[0].Key = key // the private key published
	docs["/jwks.json"] = jwksOf("k1", key)
	docs["/private-jwks.json"] = priv
	p := Start(t, Options{ClientIDMetadataDocuments: true, DocumentClient: client})

	resp, err := asClient(p).Get(p.Issuer + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if md["client_id_metadata_document_supported"] != true {
		t.Errorf("metadata = %v, want client_id_metadata_document_supported", md)
	}
	listed := Start(t, Options{TokenEndpointAuthMethods: []string{"none"}})
	resp, err = asClient(listed).Get(listed.Issuer + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	md = nil
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if fmt.Sprint(md["token_endpoint_auth_methods_supported"]) != "[none]" || md["client_id_metadata_document_supported"] != nil {
		t.Errorf("metadata with Options.TokenEndpointAuthMethods = %v", md)
	}

	public := doc("/public.json", nil)
	c, err := p.store.GetClientByClientID(context.Background(), public)
	if err != nil || c.AuthMethod() != oidc.AuthMethodNone || c.GetID() != public || strings.Join(c.RedirectURIs(), " ") != "https://app.test/callback" {
		t.Fatalf("the public document's client = %v, %v", c, err)
	}
	jwt := doc("/jwt.json", func(m map[string]any) {
		m["token_endpoint_auth_method"] = "private_key_jwt"
		m["jwks_uri"] = origin + "/jwks.json"
	})
	if c, err := p.store.GetClientByClientID(context.Background(), jwt); err != nil || c.AuthMethod() != oidc.AuthMethodPrivateKeyJWT {
		t.Fatalf("the private_key_jwt document's client = %v, %v", c, err)
	}
	a := p.checkAssertion(context.Background(), assertionForm(jwt, sign(t, key, "k1", claimsFor(jwt, p.Issuer))), false)
	if a.Err != "" {
		t.Errorf("an assertion of the document's key: %s", a.Err)
	}
	if a := p.checkAssertion(context.Background(), assertionForm(jwt, sign(t, newKey(t), "k1", claimsFor(jwt, p.Issuer))), false); !strings.HasPrefix(a.Err, "signature") {
		t.Errorf("an assertion of another key: %q", a.Err)
	}
	if a := p.checkAssertion(context.Background(), assertionForm(public, sign(t, key, "k1", claimsFor(public, p.Issuer))), false); !strings.Contains(a.Err, "no jwks_uri") {
		t.Errorf("an assertion of a public document's client: %q", a.Err)
	}

	for _, tc := range []struct {
		name, id, want string
	}{
		{"client_id another URL", doc("/other.json", func(m map[string]any) { m["client_id"] = origin + "/public.json" }), "client_id"},
		{"a secret method", doc("/basic.json", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_basic" }), "only none and private_key_jwt"},
		{"no method", doc("/nomethod.json", func(m map[string]any) { delete(m, "token_endpoint_auth_method") }), "no token_endpoint_auth_method"},
		{"a client secret", doc("/secret.json", func(m map[string]any) { m["client_secret"] = "s" }), "client_secret"},
		{"no redirect URIs", doc("/noredirect.json", func(m map[string]any) { delete(m, "redirect_uris") }), "no redirect_uris"},
		{"private_key_jwt without jwks_uri", doc("/nojwks.json", func(m map[string]any) { m["token_endpoint_auth_method"] = "private_key_jwt" }), "jwks_uri"},
		{"a private key published", doc("/privjwks.json", func(m map[string]any) {
			m["token_endpoint_auth_method"] = "private_key_jwt"
			m["jwks_uri"] = origin + "/private-jwks.json"
		}), "a private key"},
		{"a redirect", func() string { docs["/moved.json"] = "redirect"; return origin + "/moved.json" }(), "status 302"},
		{"a dot segment", origin + "/a/../public.json", "dot segment"},
		{"a fragment", origin + "/public.json#x", "fragment"},
		{"no path", origin, "no path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.Documents())
			if c, err := p.store.GetClientByClientID(context.Background(), tc.id); err == nil {
				t.Fatalf("accepted: %v", c)
			}
			f := p.Documents()[before:]
			if len(f) == 0 || !strings.Contains(f[len(f)-1].Err, tc.want) {
				t.Errorf("fetches = %+v, want the last refused for %q", f, tc.want)
			}
		})
	}
}

// TestMoveTo: the moved MCP server names the other issuer and takes only
// its tokens.
func TestMoveTo(t *testing.T) {
	p1, p2 := Start(t, Options{}), Start(t, Options{})
	token := func(p *Peer) string {
		status, body := postToken(t, p, url.Values{"grant_type": {"client_credentials"}, "client_id": {ServiceClientID}, "client_secret": {ServiceClientSecret}}, false)
		tok, _ := body["access_token"].(string)
		if status != http.StatusOK || tok == "" {
			t.Fatalf("client credentials = %d %v", status, body)
		}
		return tok
	}
	t1, t2 := token(p1), token(p2)
	if _, err := p1.verify(context.Background(), t1, nil); err != nil {
		t.Fatal("p1's MCP server refuses p1's token")
	}
	if _, err := p1.verify(context.Background(), t2, nil); err == nil {
		t.Fatal("p1's MCP server takes p2's token before the move")
	}
	p1.MoveTo(p2)
	if _, err := p1.verify(context.Background(), t1, nil); err == nil {
		t.Error("the moved MCP server takes the former issuer's token")
	}
	if _, err := p1.verify(context.Background(), t2, nil); err != nil {
		t.Error("the moved MCP server refuses the new issuer's token")
	}
	resp, err := dialing(p1, p1.rs).Get(strings.TrimSuffix(p1.MCPURL, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if prm.Resource != p1.MCPURL || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != p2.Issuer {
		t.Errorf("the moved MCP server's metadata = %+v, want %s alone", prm, p2.Issuer)
	}
}
