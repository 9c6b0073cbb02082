package registry

import (
	"context"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// CreateServer registers an MCP server (POST /v1/mcp/servers).
type CreateServer struct {
	Name         string
	URL          string
	Auth         ServerAuth
	Acknowledged bool
	// MaxCallsPerMinute is the server's calls-per-minute limit, 1 to the
	// instance's cap; nil for none.
	MaxCallsPerMinute *int
}

// CreateServerHandler registers servers.
type CreateServerHandler struct{ d ServerDeps }

// NewCreateServerHandler returns the handler.
func NewCreateServerHandler(d ServerDeps) *CreateServerHandler { return &CreateServerHandler{d: d} }

// Handle checks, in this order: the gates (not_signed_off,
// instance_disabled); the fields (validation_failed, every field at once;
// a URL outside the operator's allowlist is refused on url, a
// maxCallsPerMinute above the instance's cap on maxCallsPerMinute);
// the acknowledgement (acknowledgement_required); the addresses of the
// URL's host and of a client-credentials token URL (endpoint_not_public); the key ring when a credential is
// given (keys_unavailable). Then, in one tenant transaction, it stores the
// server with its sealed credential (too_many_servers, name_taken) and the
// audit event server.create.
func (h *CreateServerHandler) Handle(ctx context.Context, p ports.Principal, cmd CreateServer) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	fields := srvFieldErrors{}
	name, err := server.ParseName(cmd.Name)
	fields.add(err)
	u, err := server.ParseURL(cmd.URL)
	if err == nil {
		err = h.d.Allowed.Check(u)
	}
	fields.add(err)
	cred, err := cmd.Auth.credential()
	if !fields.add(err) {
		return nil, err
	}
	callLimit, err := h.d.callLimit(cmd.MaxCallsPerMinute)
	fields.add(err)
	if err := fields.err(); err != nil {
		return nil, err
	}
	if !cmd.Acknowledged {
		return nil, srvDomainError(server.ErrAcknowledgementRequired)
	}
	if err := h.d.checkEndpoint(ctx, u); err != nil {
		return nil, err
	}
	if err := h.d.checkTokenURL(ctx, cred); err != nil {
		return nil, err
	}

	id := h.d.NewID()
	now := h.d.Clock.Now()
	s, err := server.NewServer(id, p.TenantID, name, u, cred, cmd.Acknowledged, now)
	if err != nil {
		return nil, srvDomainError(err)
	}
	if _, err := s.Apply(server.Patch{MaxCallsPerMinute: &callLimit}, now); err != nil {
		return nil, srvDomainError(err)
	}
	sealed, err := app.SealCredential(h.d.Cipher, id, cred)
	if err != nil {
		return nil, err
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Servers().Insert(ctx, s, sealed, limits.MaxServersPerTenant); err != nil {
			return err
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action:  ActionServerCreate,
			Actor:   app.Actor(p),
			Target:  s.ID(),
			At:      s.CreatedAt(),
			Details: srvAuditDetails(s),
		})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return s, nil
}
