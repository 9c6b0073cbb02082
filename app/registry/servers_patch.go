package registry

import (
	"context"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// PatchServer changes a server (PATCH /v1/mcp/servers/{id}); nil fields
// stay as they are, at least one must be set.
type PatchServer struct {
	ID           string
	Name         *string
	URL          *string
	Auth         *ServerAuth
	Acknowledged *bool
	Enabled      *bool
	// MaxCallsPerMinute, when set, changes the calls-per-minute limit.
	MaxCallsPerMinute *CallLimitChange
}

// CallLimitChange is a new calls-per-minute limit: PerMinute 1 to the
// instance's cap, or nil to remove the limit.
type CallLimitChange struct {
	PerMinute *int
}

// PatchServerHandler changes servers.
type PatchServerHandler struct{ d ServerDeps }

// NewPatchServerHandler returns the handler.
func NewPatchServerHandler(d ServerDeps) *PatchServerHandler { return &PatchServerHandler{d: d} }

// Handle checks the gates, the id (not_found) and the fields
// (validation_failed), then applies the patch to the row read locked
// inside the update transaction, so the rules of [server.Server.Apply]
// judge the stored state: a URL change needs "acknowledged": true
// (acknowledgement_required) and empties the allowlist; a host change on a
// server with a credential, and any URL change of an OAuth server, needs
// auth (credential_required). A new client-credentials token URL must pass
// the address check (endpoint_not_public) before anything is read. A URL that
// really changes must be inside the operator's allowlist (validation_failed
// on url, before the other rules) and pass the address check
// (endpoint_not_public). A maxCallsPerMinute above the instance's cap is
// validation_failed on maxCallsPerMinute; null removes the limit. A new
// credential is sealed for this server's row. The audit event
// server.update names the changed fields only; a patch that changes
// nothing writes no event.
func (h *PatchServerHandler) Handle(ctx context.Context, p ports.Principal, cmd PatchServer) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	patch, err := cmd.patch(h.d)
	if err != nil {
		return nil, err
	}

	// The allowlist and address checks run before the transaction, so no
	// DNS lookup happens while the row is locked; their answers count only
	// if the URL turns out to change. A URL outside the allowlist is not
	// even looked up.
	var allowErr, endpointErr error
	if patch.URL != nil {
		if allowErr = srvDomainError(h.d.Allowed.Check(*patch.URL)); allowErr == nil {
			endpointErr = h.d.checkEndpoint(ctx, *patch.URL)
		}
	}
	// A new credential's token URL is new: its check counts always.
	if patch.Credential != nil {
		if err := h.d.checkTokenURL(ctx, *patch.Credential); err != nil {
			return nil, err
		}
	}

	now := h.d.Clock.Now()
	var updated *server.Server
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var changed []string
		s, err := tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			urlChanges := patch.URL != nil && *patch.URL != s.URL()
			if urlChanges && allowErr != nil {
				return ports.CredentialUpdate{}, allowErr
			}
			c, err := s.Apply(patch, now)
			if err != nil {
				return ports.CredentialUpdate{}, srvDomainError(err)
			}
			if urlChanges && endpointErr != nil {
				return ports.CredentialUpdate{}, endpointErr
			}
			changed = c
			if patch.Credential == nil {
				return ports.CredentialUpdate{}, nil
			}
			sealed, err := app.SealCredential(h.d.Cipher, s.ID(), *patch.Credential)
			if err != nil {
				return ports.CredentialUpdate{}, err
			}
			return ports.CredentialUpdate{Replace: true, Encrypted: sealed}, nil
		})
		if err != nil {
			return err
		}
		updated = s
		if len(changed) == 0 {
			return nil
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action:  ActionServerUpdate,
			Actor:   app.Actor(p),
			Target:  id,
			At:      now,
			Details: map[string]any{"changed": changed},
		})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return updated, nil
}

// patch reads the command's fields into the domain's patch
// (validation_failed naming every bad field; at least one must be set).
func (cmd PatchServer) patch(d ServerDeps) (server.Patch, error) {
	if cmd.Name == nil && cmd.URL == nil && cmd.Auth == nil && cmd.Acknowledged == nil && cmd.Enabled == nil && cmd.MaxCallsPerMinute == nil {
		return server.Patch{}, app.Invalid(map[string]string{"body": "must set at least one of name, url, auth, acknowledged, enabled, maxCallsPerMinute"})
	}
	patch := server.Patch{Acknowledged: cmd.Acknowledged, Enabled: cmd.Enabled}
	fields := srvFieldErrors{}
	if cmd.Name != nil {
		n, err := server.ParseName(*cmd.Name)
		fields.add(err)
		patch.Name = &n
	}
	if cmd.URL != nil {
		u, err := server.ParseURL(*cmd.URL)
		fields.add(err)
		patch.URL = &u
	}
	if cmd.Auth != nil {
		c, err := cmd.Auth.credential()
		if !fields.add(err) {
			return server.Patch{}, err
		}
		patch.Credential = &c
	}
	if cmd.MaxCallsPerMinute != nil {
		l, err := d.callLimit(cmd.MaxCallsPerMinute.PerMinute)
		fields.add(err)
		patch.MaxCallsPerMinute = &l
	}
	return patch, fields.err()
}
