package registry

import (
	"context"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// ConnectionResult is the answer of a connection test: OK with the
// number of tools the server listed, or the fixed code of the failure
// (one of the discovery's 502 codes).
type ConnectionResult struct {
	OK    bool
	Tools int
	Code  app.Code
}

// TestServer tests a registered server's connection
// (POST /v1/mcp/servers/{id}/test).
type TestServer struct {
	ID string
}

// TestConnectionHandler tests connections: it connects and lists the
// tools through the guarded transport, like a discovery, and stores
// nothing of the outcome (no lastError, no listing, no audit event).
// Every live listing is throttled: a registered server's test takes the
// discovery claim, an unsaved server's test counts against the tenant's
// limit on such tests.
type TestConnectionHandler struct {
	s ServerDeps
	d DiscoveryDeps
}

// NewTestConnectionHandler returns the handler.
func NewTestConnectionHandler(s ServerDeps, d DiscoveryDeps) *TestConnectionHandler {
	return &TestConnectionHandler{s: s, d: d}
}

// Handle tests a registered server with its stored credential, after the
// same gates and allowlist check as a discovery and under the same claim (at most one live
// listing per limits.DiscoveryInterval and server, discovery or test;
// discovery_throttled otherwise).
func (h *TestConnectionHandler) Handle(ctx context.Context, p ports.Principal, cmd TestServer) (ConnectionResult, error) {
	if err := h.d.Gates.Check(); err != nil {
		return ConnectionResult{}, err
	}
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return ConnectionResult{}, err
	}
	if err := h.d.claimDiscovery(ctx, p.TenantID, id, ports.ListingTest); err != nil {
		return ConnectionResult{}, err
	}
	_, target, err := h.d.target(ctx, p.TenantID, id)
	if err != nil {
		return ConnectionResult{}, err
	}
	// A test must not write: no rotated OAuth credential is saved.
	target.SaveCredential = nil
	return h.list(ctx, target), nil
}

// HandleNew tests a server before it is registered
// (POST /v1/mcp/servers/test, a create body): the same gates, field rules
// (the operator's allowlist of URLs included) and save-time address checks
// as the registration (validation_failed, endpoint_not_public), without
// the acknowledgement, since a test sends
// nothing of a review. Nothing is stored and the credential is never
// sealed. A test that passes those checks counts against the tenant's
// limit (limits.MaxConnectionTests per limits.ConnectionTestWindow,
// discovery_throttled past it) before anything is sent.
func (h *TestConnectionHandler) HandleNew(ctx context.Context, p ports.Principal, cmd CreateServer) (ConnectionResult, error) {
	if err := h.s.Gates.Check(); err != nil {
		return ConnectionResult{}, err
	}
	fields := srvFieldErrors{}
	name, err := server.ParseName(cmd.Name)
	fields.add(err)
	u, err := server.ParseURL(cmd.URL)
	if err == nil {
		err = h.s.Allowed.Check(u)
	}
	fields.add(err)
	cred, err := cmd.Auth.credential()
	if !fields.add(err) {
		return ConnectionResult{}, err
	}
	if err := fields.err(); err != nil {
		return ConnectionResult{}, err
	}
	if err := h.s.checkEndpoint(ctx, u); err != nil {
		return ConnectionResult{}, err
	}
	if err := h.s.checkTokenURL(ctx, cred); err != nil {
		return ConnectionResult{}, err
	}
	if err := h.d.claimConnectionTest(ctx, p.TenantID); err != nil {
		return ConnectionResult{}, err
	}
	// A fresh id, so the connector's token cache never mixes the test
	// with a registered server.
	s, err := server.NewServer(h.s.NewID(), p.TenantID, name, u, cred, true, h.s.Clock.Now())
	if err != nil {
		return ConnectionResult{}, srvDomainError(err)
	}
	return h.list(ctx, ports.MCPTarget{ServerID: s.ID(), TenantID: p.TenantID, URL: s.URL(), Credential: cred}), nil
}

func (h *TestConnectionHandler) list(ctx context.Context, t ports.MCPTarget) ConnectionResult {
	listed, err := func() ([]ports.ListedTool, error) {
		sess, err := h.d.Connector.Open(ctx, t, limits.DiscoveryResponseCap)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		return sess.ListTools(ctx)
	}()
	if err != nil {
		code, _ := app.RemoteFailure(err)
		return ConnectionResult{Code: code}
	}
	return ConnectionResult{OK: true, Tools: len(listed)}
}
