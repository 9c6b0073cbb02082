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

// CreateToken creates an API token of the tenant with the given
// permissions and returns it. The token is shown this once: only its
// SHA-256 ([TokenHash]) is stored. Errors: validation_failed for bad
// permissions or a tenant id that is not a UUID, not_found for an unknown
// tenant.
func (a *AccountAdmin) CreateToken(ctx context.Context, tenantID string, permissions []string) (string, error) {
	perms, err := ParsePermissions(permissions)
	if err != nil {
		return "", err
	}
	tenantID, ok := id.Parse(tenantID)
	if !ok {
		return "", &app.Error{Code: app.CodeValidationFailed, Message: "the tenant id must be a UUID",
			Fields: map[string]string{"tenant": "must be a UUID"}}
	}
	token := newToken()
	if _, err := a.accounts.CreateToken(ctx, tenantID, TokenHash(token), perms); err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return "", &app.Error{Code: app.CodeNotFound, Message: "unknown tenant", Cause: err}
		}
		return "", fmt.Errorf("create token: %w", err)
	}
	return token, nil
}

// newToken returns TokenPrefix and 32 random bytes in unpadded base64url.
// crypto/rand.Read does not fail (it aborts the program if the system's
// source is broken), so there is no error to return.
func newToken() string { return newSecret(TokenPrefix) }
