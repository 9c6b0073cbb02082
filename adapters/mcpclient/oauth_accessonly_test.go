package mcpclient

import (
	"context"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/mcpclient/oauthpeer"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// A code flow whose authorization server issued no refresh token: the
// connector uses the exchange's access token without any token request,
// never refreshes it after a 401, and sends nothing once it has expired.
func TestAccessOnlyConnection(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	const secret = "web-secret"
	connected, md := e.connect(t, oauthpeer.WebClientID, secret)
	// A real access token of the authorization server (taken from a
	// session of the connected credential): the connection as FinishConnect
	// stores it when the exchange's answer has no refresh token.
	save := func(context.Context, server.Credential) error { return nil }
	first, err := e.conn.OpenSession(context.Background(), ports.MCPTarget{ServerID: "srv-0", URL: e.mcpURL(t), Credential: connected, SaveCredential: save}, 1<<20)
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, e.logs)
	}
	first.Close()
	reqs := e.peer.MCPRequests()
	access := bearerOf(reqs[len(reqs)-1].Header.Get("Authorization"))
	if access == "" {
		t.Fatal("no access token seen at the MCP server")
	}
	code, err := server.NewOAuthAuthorizationCode(oauthpeer.WebClientID, secret, e.peer.Issuer, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cred, err := code.WithAccessOnlyConnection(md.Issuer, md.TokenEndpoint, access, now.Add(time.Hour), "admin", now)
	if err != nil {
		t.Fatal(err)
	}
	target := ports.MCPTarget{ServerID: "srv-a", URL: e.mcpURL(t), Credential: cred}
	ctx := context.Background()
	before := len(e.peer.TokenRequests())

	s, err := e.conn.OpenSession(ctx, target, 1<<20)
	if err != nil {
		t.Fatalf("Open with the stored access token: %v\n%s", err, e.logs)
	}
	if _, err := s.ListAll(ctx); err != nil {
		t.Fatalf("ListAll: %v", err)
	}
	if n := len(e.peer.TokenRequests()) - before; n != 0 {
		t.Errorf("%d token requests for a connection without refresh token", n)
	}
	// A 401: nothing to refresh with, so no token request and
	// server_unauthorized at once.
	e.peer.RevokeAccessTokens()
	mcpBefore := len(e.peer.MCPRequests())
	_, err = s.ListAll(ctx)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.TokenRequests()) - before; n != 0 {
		t.Errorf("%d token requests after a 401", n)
	}
	if n := len(e.peer.MCPRequests()) - mcpBefore; n != 1 {
		t.Errorf("%d MCP requests after the 401, want 1 (no retry with the same token)", n)
	}
	s.Close()

	// Expired: refused before anything is sent.
	expired, err := code.WithAccessOnlyConnection(md.Issuer, md.TokenEndpoint, access, now.Add(20*time.Second), "admin", now)
	if err != nil {
		t.Fatal(err)
	}
	asBefore, mcpBefore := len(e.peer.ASRequests()), len(e.peer.MCPRequests())
	_, err = e.conn.Open(ctx, ports.MCPTarget{ServerID: "srv-b", URL: e.mcpURL(t), Credential: expired}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.ASRequests()) - asBefore + len(e.peer.MCPRequests()) - mcpBefore; n != 0 {
		t.Errorf("%d requests for an expired connection (within the expiry margin)", n)
	}
	noSecrets(t, "the log", e.logs.String(), access)
}
