package reviews

import (
	"context"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// markChanged records the tools a run found changed on their server:
// each one's state becomes changed (with the definition listed, nil when
// it could not be read), blocked until the admin approves it again, and
// the server's lastError becomes tool_changed. A tool the admin approved
// meanwhile (its pin now matches what the run listed) is left alone. A
// failure to store is logged: it must not fail the review.
func (r *mcpRun) markChanged(ctx context.Context, serverID string, changed []ports.ListedTool) {
	err := r.deps.Tenants.InTenant(context.WithoutCancel(ctx), r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Servers().Update(ctx, serverID, func(s *server.Server) (ports.CredentialUpdate, error) {
			marked := false
			for _, lt := range changed {
				for _, snap := range s.Tools() {
					if snap.Name() != lt.Name {
						continue
					}
					if lt.Err == nil && snap.Matches(lt.Definition) && s.ToolStatus(lt.Name).State != server.ToolChanged {
						continue // approved meanwhile
					}
					if lt.Err != nil {
						s.MarkChanged(lt.Name, nil)
					} else {
						d := lt.Definition
						s.MarkChanged(lt.Name, &d)
					}
					marked = true
				}
			}
			if marked {
				s.RecordError(ToolChanged)
			}
			return ports.CredentialUpdate{}, nil
		})
		return err
	})
	if err != nil {
		r.deps.warn("mcp server: cannot record "+ToolChanged, map[string]string{"server_id": serverID, "error": err.Error()})
	}
}
