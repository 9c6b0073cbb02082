package registry

import (
	"context"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// DeleteServer removes a server (DELETE /v1/mcp/servers/{id}). It is the
// one MCP change allowed whatever the gates say: an admin must always be
// able to take a server and its credential away.
type DeleteServer struct {
	ID string
}

// DeleteServerHandler deletes servers.
type DeleteServerHandler struct{ d ServerDeps }

// NewDeleteServerHandler returns the handler.
func NewDeleteServerHandler(d ServerDeps) *DeleteServerHandler { return &DeleteServerHandler{d: d} }

// Handle deletes the server (its encrypted credential and call records go
// with the row) and records server.delete in the same transaction;
// not_found for an unknown or foreign id.
func (h *DeleteServerHandler) Handle(ctx context.Context, p ports.Principal, cmd DeleteServer) error {
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return err
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		s, err := tx.Servers().Get(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.Servers().Delete(ctx, id); err != nil {
			return err
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action:  ActionServerDelete,
			Actor:   app.Actor(p),
			Target:  id,
			At:      h.d.Clock.Now(),
			Details: map[string]any{"name": s.Name().String()},
		})
	})
	return srvStoreError(err)
}
