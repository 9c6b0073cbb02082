package registry

import (
	"context"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// GetServer reads one server (GET /v1/mcp/servers/{id}). Reading is not
// gated: an admin sees what is registered even while MCP context is off.
type GetServer struct {
	ID string
}

// GetServerHandler reads servers.
type GetServerHandler struct{ d ServerDeps }

// NewGetServerHandler returns the handler.
func NewGetServerHandler(d ServerDeps) *GetServerHandler { return &GetServerHandler{d: d} }

// Handle returns the server, or not_found for an unknown id, a malformed
// id or an id of another tenant.
func (h *GetServerHandler) Handle(ctx context.Context, p ports.Principal, cmd GetServer) (*server.Server, error) {
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	var s *server.Server
	err = h.d.Tenants.ReadInTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		s, err = tx.Servers().Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return s, nil
}

// ListServers lists the tenant's servers (GET /v1/mcp/servers), by name.
type ListServers struct{}

// ListServersHandler lists servers.
type ListServersHandler struct{ d ServerDeps }

// NewListServersHandler returns the handler.
func NewListServersHandler(d ServerDeps) *ListServersHandler { return &ListServersHandler{d: d} }

// Handle returns the tenant's servers ordered by name (never nil).
func (h *ListServersHandler) Handle(ctx context.Context, p ports.Principal, _ ListServers) ([]*server.Server, error) {
	var out []*server.Server
	err := h.d.Tenants.ReadInTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		out, err = tx.Servers().List(ctx)
		return err
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	if out == nil {
		out = []*server.Server{}
	}
	return out, nil
}
