package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// fakeAssertions signs nothing: it returns its arguments, so a test sees
// what the connector asked to sign.
type fakeAssertions struct{ err error }

func (f fakeAssertions) ClientAssertion(clientID, audience string) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	return "assertion-for:" + clientID + "@" + audience, nil
}

// TestTokenRequestsAuthenticateByTheCredentialsMethod: each clientAuth
// puts the client's authentication where its RFC says, and nowhere else:
// the secret only in the Basic header (basic) or the body (post), never
// with private_key_jwt, whose assertion names the bound issuer as its
// audience; a signer missing or failing sends nothing.
func TestTokenRequestsAuthenticateByTheCredentialsMethod(t *testing.T) {
	const secret = "cc-SUPERSECRET-9876"
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeTokenJSON(w, http.StatusOK, `{"access_token":"at-1","token_type":"Bearer","expires_in":60}`)
	}))
	tokenURL := fmt.Sprintf("https://%s:%d/token", testHost, ts.port())
	issuer := fmt.Sprintf("https://%s:%d", testHost, ts.port())
	for _, tt := range []struct {
		name, secret, method, issuer string
		signer                       ports.ClientAssertions
		wantErr                      error
		check                        func(t *testing.T, h http.Header, form url.Values)
	}{
		{name: "basic", secret: secret, check: func(t *testing.T, h http.Header, form url.Values) {
			if !strings.HasPrefix(h.Get("Authorization"), "Basic ") || form.Has("client_secret") || form.Has("client_assertion") {
				t.Errorf("basic: header %q, form %v", h.Get("Authorization"), form)
			}
		}},
		{name: "post", secret: secret, method: "client_secret_post", check: func(t *testing.T, h http.Header, form url.Values) {
			if h.Get("Authorization") != "" || form.Get("client_secret") != secret || form.Get("client_id") != "client-1" {
				t.Errorf("post: header %q, form %v", h.Get("Authorization"), form)
			}
		}},
		{name: "private_key_jwt", method: "private_key_jwt", issuer: issuer, signer: fakeAssertions{}, check: func(t *testing.T, h http.Header, form url.Values) {
			if h.Get("Authorization") != "" || form.Has("client_secret") || form.Get("client_assertion") != "assertion-for:client-1@"+issuer ||
				form.Get("client_assertion_type") != clientAssertionType || form.Get("client_id") != "client-1" {
				t.Errorf("private_key_jwt: header %q, form %v", h.Get("Authorization"), form)
			}
		}},
		{name: "private_key_jwt without a signing key", method: "private_key_jwt", issuer: issuer, wantErr: ports.ErrServerUnauthorized},
		{name: "private_key_jwt whose signer fails", method: "private_key_jwt", issuer: issuer, signer: fakeAssertions{err: errors.New("hsm down")}, wantErr: ports.ErrServerUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
			c.opts.Assertions = tt.signer
			cred, err := server.NewOAuthClientCredentials(tokenURL, "client-1", tt.secret, nil, tt.method, tt.issuer)
			if err != nil {
				t.Fatal(err)
			}
			before := len(ts.requests())
			_, f := c.requestToken(context.Background(), "srv-"+tt.name, mustURL(t, "https://mcp.test/mcp"), cred, nil)
			reqs := ts.requests()[before:]
			err = nil
			if f != nil {
				err = f.code
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || len(reqs) != 0 {
					t.Fatalf("err %v after %d requests, want %v and none sent", err, len(reqs), tt.wantErr)
				}
				return
			}
			if err != nil || len(reqs) != 1 {
				t.Fatalf("token request: %v (%d requests)", err, len(reqs))
			}
			form, _ := url.ParseQuery(string(reqs[0].Body))
			tt.check(t, reqs[0].Header, form)
		})
	}
}

// TestRegistrationKeepsTheRegisteredMethod: the method a registration
// keeps is the one the authorization server registered, when it fits the
// answer; else the default of the secret.
func TestRegistrationKeepsTheRegisteredMethod(t *testing.T) {
	for _, tt := range []struct {
		answer string
		ask    server.ClientAuth
		want   server.ClientAuth
	}{
		{`{"client_id":"d1","client_secret":"s3cret-xyz","token_endpoint_auth_method":"client_secret_post"}`, server.ClientSecretBasic, server.ClientSecretPost},
		{`{"client_id":"d1","client_secret":"s3cret-xyz"}`, server.ClientSecretPost, server.ClientSecretPost},
		{`{"client_id":"d1","token_endpoint_auth_method":"none"}`, server.ClientSecretBasic, server.ClientAuthNone},
		{`{"client_id":"d1","client_secret":"s3cret-xyz","token_endpoint_auth_method":"none"}`, server.ClientSecretBasic, server.ClientSecretBasic},
		{`{"client_id":"d1","token_endpoint_auth_method":"client_secret_basic"}`, server.ClientSecretBasic, server.ClientAuthNone},
		{`{"client_id":"d1","client_secret":"s3cret-xyz","token_endpoint_auth_method":"tls_client_auth"}`, server.ClientSecretPost, server.ClientSecretPost},
	} {
		ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeTokenJSON(w, http.StatusCreated, tt.answer) }))
		c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), hostileTimeout)
		oc := NewOAuthClient(c.opts)
		oc.connect = c.connect
		md := ports.OAuthMetadata{RegistrationEndpoint: mustURL(t, fmt.Sprintf("https://%s:%d/register", testHost, ts.port()))}
		reg, err := oc.Register(context.Background(), md, "https://app.test/callback", nil, tt.ask)
		if err != nil || reg.ClientAuth != tt.want {
			t.Errorf("answer %s (asked %s): %s, %v; want %s", tt.answer, tt.ask, reg.ClientAuth, err, tt.want)
		}
	}
}
