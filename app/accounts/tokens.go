package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/ports"
)

// ParsePermissions checks a token's permissions: at least one, each
// exactly [PermTenantManage] or [PermRepoManage], no duplicates. The
// error (validation_failed, field "permissions") names the offending
// value, quoted, so a hostile value stays on one line.
func ParsePermissions(perms []string) ([]string, error) {
	if len(perms) == 0 {
		return nil, permissionsError("at least one permission is required")
	}
	out := make([]string, 0, len(perms))
	for _, p := range perms {
		if p != app.PermTenantManage && p != app.PermRepoManage {
			return nil, permissionsError(fmt.Sprintf("unknown permission %q (allowed: %s, %s)", p, app.PermTenantManage, app.PermRepoManage))
		}
		if slices.Contains(out, p) {
			return nil, permissionsError(fmt.Sprintf("duplicate permission %q", p))
		}
		out = append(out, p)
	}
	return out, nil
}

func permissionsError(reason string) *app.Error {
	return &app.Error{Code: app.CodeValidationFailed, Message: reason, Fields: map[string]string{"permissions": reason}}
}

// CreateToken is the operator's command `codelotse tokens create`: a token
// of the tenant with the given permissions.
type CreateToken struct {
	TenantID    string
	Permissions []string
}

// CreateTokenHandler creates API tokens. Safe for concurrent use.
type CreateTokenHandler struct{ d Deps }

// NewCreateTokenHandler returns a [CreateTokenHandler].
func NewCreateTokenHandler(d Deps) *CreateTokenHandler { return &CreateTokenHandler{d: d} }

// Handle creates an API token of the tenant with the given
// permissions and returns it. The token is shown this once: only its
// SHA-256 ([TokenHash]) is stored. Errors: validation_failed for bad
// permissions or a tenant id that is not a UUID, not_found for an unknown
// tenant.
func (h *CreateTokenHandler) Handle(ctx context.Context, cmd CreateToken) (string, error) {
	perms, err := ParsePermissions(cmd.Permissions)
	if err != nil {
		return "", err
	}
	tenantID, ok := id.Parse(cmd.TenantID)
	if !ok {
		return "", &app.Error{Code: app.CodeValidationFailed, Message: "the tenant id must be a UUID",
			Fields: map[string]string{"tenant": "must be a UUID"}}
	}
	token, err := newSecret(h.d.Rand, TokenPrefix)
	if err != nil {
		return "", err
	}
	if _, err := h.d.Accounts.CreateToken(ctx, tenantID, TokenHash(token), perms); err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return "", &app.Error{Code: app.CodeNotFound, Message: "unknown tenant", Cause: err}
		}
		return "", fmt.Errorf("create token: %w", err)
	}
	return token, nil
}
