package reviews

import (
	"context"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// markChanged records the tools a run found changed on their server
// ([server.Server.MarkListedChanged], the rule the recheck between reviews
// shares): each one's state becomes changed (with the definition listed,
// nil when it could not be read), blocked until the admin approves it
// again, and the server's lastError becomes tool_changed. A tool the admin
// approved meanwhile (its pin now matches what the run listed) is left
// alone. A failure to store is logged: it must not fail the review.
func (r *mcpRun) markChanged(ctx context.Context, serverID string, changed []ports.ListedTool) {
	err := r.deps.Tenants.InTenant(context.WithoutCancel(ctx), r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Servers().Update(ctx, serverID, func(s *server.Server) (ports.CredentialUpdate, error) {
			live := make([]server.LiveTool, len(changed))
			for i, lt := range changed {
				live[i] = server.LiveTool{Name: lt.Name, Definition: lt.Definition, Readable: lt.Err == nil}
			}
			s.MarkListedChanged(live)
			return ports.CredentialUpdate{}, nil
		})
		return err
	})
	if err != nil {
		r.deps.warn("mcp server: cannot record "+ToolChanged, map[string]string{"server_id": serverID, "error": err.Error()})
	}
}
