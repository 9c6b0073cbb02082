package registry_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// rotatingConnector is a connector in front of a code-flow server whose
// token endpoint rotates the refresh token at every refresh. It behaves
// as adapters/mcpclient does (requestToken; TestARotatedRefreshTokenNeedsASaver
// there): the rotated credential is saved through the target's saver
// before the session opens, and without a saver, or when the save fails,
// the connection is server_unauthorized, since the old refresh token is
// spent.
type rotatingConnector struct {
	*fakeConnector
	next    string // the refresh token the token endpoint issues
	refresh int    // token requests
}

func (c *rotatingConnector) Open(ctx context.Context, t ports.MCPTarget, cap int64) (ports.MCPSession, error) {
	o, _ := t.Credential.OAuth()
	if t.Credential.Kind() != server.KindOAuthAuthorizationCode || o.RefreshToken == "" {
		return nil, fmt.Errorf("fake: not a connected code flow: %w", ports.ErrServerUnauthorized)
	}
	c.refresh++
	rotated, err := t.Credential.WithRefreshToken(c.next)
	if err != nil {
		return nil, err
	}
	if t.SaveCredential == nil {
		return nil, fmt.Errorf("fake: no credential saver for a rotated refresh token: %w", ports.ErrServerUnauthorized)
	}
	if err := t.SaveCredential(ctx, rotated); err != nil {
		return nil, fmt.Errorf("fake: rotated refresh token not saved (%v): %w", err, ports.ErrServerUnauthorized)
	}
	return c.fakeConnector.Open(ctx, t, cap)
}

// TestConnectionTestOfARotatingServerStoresNothing: testing the
// connection of a connected code-flow server whose token endpoint rotates
// the refresh token stores nothing, neither the server's row nor its
// sealed credential changes (byte for byte), and the answer is
// server_unauthorized: the test gives the connector no saver
// (test_connection.go, "A test must not write"), and a rotation that
// cannot be saved fails the connection. A discovery of the same server
// (which has a saver) stores the rotated token: the test's connection
// reached the rotation and was refused it, it did not fail before.
func TestConnectionTestOfARotatingServerStoresNothing(t *testing.T) {
	const rotated = "rt-SUPERSECRET-rotated-6666"
	e := newConnectEnv(t)
	srv := e.codeServer(t, "client-1")
	authURL, err := e.start(srvPrincipalA, srv.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.finish(srvPrincipalA, callback(t, authURL)); err != nil {
		t.Fatal(err)
	}
	id := srv.ID()
	conn := &rotatingConnector{next: rotated, fakeConnector: &fakeConnector{tools: map[string][]ports.ListedTool{
		"https://wiki.example.com/mcp": {def(t, "search", "Search the wiki.", flatSchema, readOnly)},
	}}}
	dd := registry.DiscoveryDeps{Tenants: e.tenants, Cipher: app.NewVault(e.cipher), Connector: conn, Clock: e.clock, Gates: srvOpenGates,
		Findings: registry.NewFindings(portfake.Scanner{})}
	h := registry.NewTestConnectionHandler(e.serverEnv.deps, dd)

	repo := e.repos[srvTenantA]
	repo.Clock = e.clock // the database's clock of the discovery claim
	row, rowCopy := repo.Rows[id], *repo.Rows[id]
	sealed := bytes.Clone(repo.Creds[id])
	auditBefore := len(e.audit(srvTenantA))

	got, err := h.Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: id})
	if err != nil || got.OK || got.Code != app.CodeServerUnauthorized {
		t.Errorf("test of a rotating server = %+v, %v; want server_unauthorized", got, err)
	}
	if conn.refresh != 1 || conn.listing != 0 {
		t.Errorf("%d refreshes, %d listings; want the one refresh (that rotated) and no listing", conn.refresh, conn.listing)
	}
	if repo.Rows[id] != row || !reflect.DeepEqual(*repo.Rows[id], rowCopy) {
		t.Error("the test changed the server's row")
	}
	if !bytes.Equal(repo.Creds[id], sealed) {
		t.Error("the test changed the sealed credential")
	}
	if n := len(e.audit(srvTenantA)); n != auditBefore {
		t.Errorf("the test recorded %d audit events", n-auditBefore)
	}
	cred, err := app.OpenCredential(app.NewVault(e.cipher), id, repo.Creds[id])
	if o, _ := cred.OAuth(); err != nil || o.RefreshToken != cnRefresh {
		t.Errorf("the stored credential after the test: %v, want the refresh token of the connection", err)
	}

	// The control of the test above: a discovery saves the rotation.
	// (After the test's discovery claim has passed.)
	e.clock.At = e.clock.At.Add(limits.DiscoveryInterval)
	if _, err := registry.NewDiscoverServerHandler(dd).Handle(context.Background(), srvPrincipalA, registry.DiscoverServer{ID: id}); err != nil {
		t.Fatalf("discovery of the rotating server = %v", err)
	}
	cred, err = app.OpenCredential(app.NewVault(e.cipher), id, repo.Creds[id])
	if o, _ := cred.OAuth(); err != nil || o.RefreshToken != rotated {
		t.Errorf("after a discovery the stored refresh token is not the rotated one (%v)", err)
	}
}
