package registry_test

import (
	"net/url"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

const cnDocument = "https://codelotse.example.com/oauth/client-metadata.json"

func (e *connectEnv) kept(t *testing.T, id string) server.OAuth {
	t.Helper()
	c, err := app.OpenCredential(app.NewVault(e.cipher), id, e.repos[srvTenantA].Creds[id])
	if err != nil {
		t.Fatal(err)
	}
	o, _ := c.OAuth()
	return o
}

func clientIDOf(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("client_id")
}

// TestConnectByClientMetadataDocument: a code-flow server without a
// client id, at an authorization server that takes client ID metadata
// documents, connects with the instance's document URL as its client id:
// nothing is registered, the client is kept (audited) and authenticates
// with private_key_jwt when the instance signs and the server accepts
// it, else as a public client. Without a published document the order
// goes on to dynamic registration, and without that to the refusal.
func TestConnectByClientMetadataDocument(t *testing.T) {
	for _, tt := range []struct {
		name     string
		doc      registry.ClientDocument
		methods  []string
		dcr      bool
		want     server.ClientAuth
		clientID string
		refused  bool
	}{
		{name: "signing instance", doc: registry.ClientDocument{URL: cnDocument, Signs: true}, methods: []string{"private_key_jwt", "none"}, want: server.PrivateKeyJWT, clientID: cnDocument},
		{name: "no signing key", doc: registry.ClientDocument{URL: cnDocument}, methods: []string{"private_key_jwt", "none"}, want: server.ClientAuthNone, clientID: cnDocument},
		// The document declares private_key_jwt: a server that takes no
		// assertion gets a registration instead (none allowed here).
		{name: "the server takes no assertion", doc: registry.ClientDocument{URL: cnDocument, Signs: true}, methods: []string{"none"}, refused: true},
		{name: "no document published: registration", doc: registry.ClientDocument{}, dcr: true, want: server.ClientSecretBasic, clientID: "dcr-client-1"},
		{name: "neither", doc: registry.ClientDocument{}, refused: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newConnectEnv(t)
			e.deps.Document = tt.doc
			e.oauth.Metadata.ClientIDMetadataDocuments = true
			e.oauth.Metadata.TokenEndpointAuthMethods = tt.methods
			if tt.dcr {
				e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer}
			}
			s := e.codeServer(t, "")
			authURL, err := e.start(srvPrincipalA, s.ID())
			if tt.refused {
				srvWantCode(t, err, app.CodeValidationFailed)
				if e.kept(t, s.ID()).ClientID != "" {
					t.Fatal("a refused start kept a client")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := clientIDOf(t, authURL); got != tt.clientID {
				t.Errorf("client_id %q, want %q", got, tt.clientID)
			}
			if o := e.kept(t, s.ID()); o.ClientID != tt.clientID || o.ClientAuth != tt.want || !o.Registered || o.Issuer != cnIssuer {
				t.Errorf("kept client %q %s registered %v issuer %q", o.ClientID, o.ClientAuth, o.Registered, o.Issuer)
			}
			if tt.clientID == cnDocument && len(e.oauth.Registered) != 0 {
				t.Errorf("registered %v beside the document", e.oauth.Registered)
			}
			var audited bool
			for _, ev := range e.audit(srvTenantA) {
				if ev.Action == registry.ActionServerRegisterClient {
					audited = ev.Details["clientId"] == tt.clientID && ev.Details["metadataDocument"] == (tt.clientID == cnDocument) && ev.Details["clientAuth"] == string(tt.want)
				}
			}
			if !audited {
				t.Errorf("no register_client event naming the client: %+v", e.audit(srvTenantA))
			}
			if _, err := e.finish(srvPrincipalA, callback(t, authURL)); err != nil {
				t.Fatal(err)
			}
			if x := e.oauth.Exchanges[0]; x.ClientID != tt.clientID || x.ClientAuth != tt.want || x.Issuer != cnIssuer {
				t.Errorf("exchange by %q with %s at %q", x.ClientID, x.ClientAuth, x.Issuer)
			}
		})
	}
}

// TestConnectRegistersWithTheAnnouncedMethod: a dynamic registration asks
// for the method the authorization server announces.
func TestConnectRegistersWithTheAnnouncedMethod(t *testing.T) {
	for methods, want := range map[string]server.ClientAuth{"": server.ClientSecretBasic, "client_secret_post": server.ClientSecretPost, "none": server.ClientAuthNone} {
		e := newConnectEnv(t)
		e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer}
		if methods != "" {
			e.oauth.Metadata.TokenEndpointAuthMethods = []string{methods}
		}
		if want == server.ClientAuthNone {
			e.oauth.RegisteredSecret = "" // a public client gets none
		}
		if _, err := e.start(srvPrincipalA, e.codeServer(t, "").ID()); err != nil {
			t.Fatal(err)
		}
		if len(e.oauth.RegisteredAuth) != 1 || e.oauth.RegisteredAuth[0] != want {
			t.Errorf("methods %q: registration asked for %v, want %s", methods, e.oauth.RegisteredAuth, want)
		}
	}
}

// TestConnectRefusesAMethodTheServerDoesNotTake: an admin's client whose
// method the authorization server's list leaves out is refused before
// anything is sent to it.
func TestConnectRefusesAMethodTheServerDoesNotTake(t *testing.T) {
	e := newConnectEnv(t)
	e.oauth.Metadata.TokenEndpointAuthMethods = []string{"client_secret_post"}
	s := e.create(t, srvPrincipalA, registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/mcp", Auth: confAuth(), Acknowledged: true})
	_, err := e.start(srvPrincipalA, s.ID())
	srvWantCode(t, err, app.CodeProtocolError, srvClientSecret)
	if n := len(e.tenants.Txs[srvTenantA].OAuthStateRepo.Rows); n != 0 || len(e.oauth.Exchanges) != 0 {
		t.Errorf("a refused start stored %d pending connections, exchanged %d codes", n, len(e.oauth.Exchanges))
	}
}

// TestConnectMigratesARegisteredClient: a server whose resource moves to
// another authorization server, with a client the service registered,
// obtains a new client there when an admin connects again: nothing of the
// old client or connection is kept or sent there, and the move is
// audited. The admin's own client is refused instead
// (TestConnectBoundIssuer).
func TestConnectMigratesARegisteredClient(t *testing.T) {
	const as2 = "https://as2.example.com"
	e := newConnectEnv(t)
	e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer, as2}
	s := e.codeServer(t, "")
	authURL, err := e.start(srvPrincipalA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.finish(srvPrincipalA, callback(t, authURL)); err != nil {
		t.Fatal(err)
	}
	if o := e.kept(t, s.ID()); o.RefreshToken != cnRefresh || o.Issuer != cnIssuer {
		t.Fatalf("first connection %+v", o.Issuer)
	}

	e.oauth.Metadata.Issuer = as2
	e.oauth.Metadata.AuthorizationEndpoint = mustParse(t, as2+"/authorize")
	e.oauth.Metadata.TokenEndpoint = mustParse(t, as2+"/token")
	e.oauth.Metadata.RegistrationEndpoint = mustParse(t, as2+"/register")
	e.oauth.RegisteredID, e.oauth.RegisteredSecret = "as2-client", "as2-SUPERSECRET-client-7777"
	e.oauth.Issuers = nil
	authURL, err = e.start(srvPrincipalA, s.ID())
	if err != nil {
		t.Fatalf("StartConnect after the move = %v", err)
	}
	if len(e.oauth.Issuers) != 2 || e.oauth.Issuers[0] != cnIssuer || e.oauth.Issuers[1] != "" {
		t.Errorf("discoveries %q: want the bound issuer, then unbound", e.oauth.Issuers)
	}
	if u, _ := url.Parse(authURL); u.Host != "as2.example.com" || u.Query().Get("client_id") != "as2-client" || len(e.oauth.Registered) != 2 {
		t.Errorf("authorization URL %s after %d registrations", authURL, len(e.oauth.Registered))
	}
	o := e.kept(t, s.ID())
	if o.Issuer != as2 || o.ClientID != "as2-client" || o.RefreshToken != "" || o.Connected() || o.ClientSecret == cnDCRSecret {
		t.Errorf("kept after the move: issuer %q client %q connected %v", o.Issuer, o.ClientID, o.Connected())
	}
	var moved bool
	for _, ev := range e.audit(srvTenantA) {
		moved = moved || ev.Action == registry.ActionServerMigrateIssuer && ev.Details["from"] == cnIssuer && ev.Details["to"] == as2
	}
	if !moved {
		t.Error("the move is not audited")
	}
	cb := callback(t, authURL)
	cb.Iss = as2
	if _, err := e.finish(srvPrincipalA, cb); err != nil {
		t.Fatal(err)
	}
	if x := e.oauth.Exchanges[len(e.oauth.Exchanges)-1]; x.ClientID != "as2-client" || x.TokenURL.Host() != "as2.example.com" || x.ClientSecret == cnDCRSecret {
		t.Errorf("exchange after the move %q at %s", x.ClientID, x.TokenURL)
	}
}
