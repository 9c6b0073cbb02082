package accounts

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// MaxTenantNameLen is the longest tenant name, in characters.
const MaxTenantNameLen = 200

// Deps are the ports the module's use cases share. Cipher is nil when no
// key ring is configured; Rand is the source of token and session
// secrets (crypto/rand.Reader).
type Deps struct {
	Accounts ports.Accounts
	Tenants  ports.Tenants
	Sessions ports.WebSessions
	Cipher   app.Vault
	Clock    ports.Clock
	Rand     ports.Random
	// Limiter counts failed authentications (nil: no limit).
	Limiter *AuthLimiter
}

// CreateTenant is the operator's command `codelotse tenants create`. It
// acts outside any tenant, so it takes no principal.
type CreateTenant struct{ Name string }

// CreateTenantHandler creates tenants. Safe for concurrent use.
type CreateTenantHandler struct{ d Deps }

// NewCreateTenantHandler returns a [CreateTenantHandler].
func NewCreateTenantHandler(d Deps) *CreateTenantHandler { return &CreateTenantHandler{d: d} }

// Handle stores a new tenant and returns its id. name is 1–200
// printable characters, not only spaces; otherwise validation_failed
// (field "name").
func (h *CreateTenantHandler) Handle(ctx context.Context, cmd CreateTenant) (string, error) {
	name := cmd.Name
	if reason := app.CheckDisplayName(name, MaxTenantNameLen); reason != "" {
		return "", &app.Error{Code: app.CodeValidationFailed, Message: "the tenant name " + reason,
			Fields: map[string]string{"name": reason}}
	}
	id, err := h.d.Accounts.CreateTenant(ctx, name)
	if err != nil {
		return "", fmt.Errorf("create tenant: %w", err)
	}
	return id, nil
}
