package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

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

// CreateToken creates a token of a tenant: the operator's command
// `codelotse tokens create` (Actor "operator") and POST /v1/tokens (the
// tenant admin's token as Actor).
type CreateToken struct {
	TenantID    string
	Permissions []string
	// Label tells tokens apart in lists (0–[MaxTokenLabelLen] characters,
	// no control characters).
	Label string
	// ExpiresIn ends the token that long after its creation (0: never;
	// else [MinTokenLifetime] to [MaxTokenLifetime]).
	ExpiresIn time.Duration
	// Actor is who creates it, for the audit log ("" is the operator).
	Actor string
}

// IssuedToken is a new token, shown this once, and what may be shown of it.
type IssuedToken struct {
	Token string
	Info  ports.TokenInfo
}

// CreateTokenHandler creates API tokens. Safe for concurrent use.
type CreateTokenHandler struct{ d Deps }

// NewCreateTokenHandler returns a [CreateTokenHandler].
func NewCreateTokenHandler(d Deps) *CreateTokenHandler { return &CreateTokenHandler{d: d} }

// Handle is [CreateTokenHandler.Issue] returning the token alone.
func (h *CreateTokenHandler) Handle(ctx context.Context, cmd CreateToken) (string, error) {
	t, err := h.Issue(ctx, cmd)
	return t.Token, err
}

// Issue creates an API token of the tenant with the given permissions,
// label and expiry, audits token.create in the tenant (the label,
// permissions and expiry, never the token) and returns it. The token is
// shown this once: only its SHA-256 ([TokenHash]) is stored. Errors:
// validation_failed for bad permissions, label, expiry or a tenant id that
// is not a UUID, not_found for an unknown tenant.
func (h *CreateTokenHandler) Issue(ctx context.Context, cmd CreateToken) (IssuedToken, error) {
	perms, err := ParsePermissions(cmd.Permissions)
	if err != nil {
		return IssuedToken{}, err
	}
	tenantID, ok := id.Parse(cmd.TenantID)
	if !ok {
		return IssuedToken{}, &app.Error{Code: app.CodeValidationFailed, Message: "the tenant id must be a UUID",
			Fields: map[string]string{"tenant": "must be a UUID"}}
	}
	if err := checkLabel(cmd.Label); err != nil {
		return IssuedToken{}, err
	}
	if cmd.ExpiresIn != 0 && (cmd.ExpiresIn < MinTokenLifetime || cmd.ExpiresIn > MaxTokenLifetime) {
		reason := fmt.Sprintf("must be between %s and %d days", MinTokenLifetime, MaxTokenLifetime/(24*time.Hour))
		return IssuedToken{}, &app.Error{Code: app.CodeValidationFailed, Message: "expiresIn " + reason, Fields: map[string]string{"expiresIn": reason}}
	}
	token, err := newSecret(h.d.Rand, TokenPrefix)
	if err != nil {
		return IssuedToken{}, err
	}
	now := h.d.now()
	nt := ports.NewToken{TenantID: tenantID, Hash: TokenHash(token), Permissions: perms, Label: cmd.Label}
	if cmd.ExpiresIn > 0 {
		nt.ExpiresAt = now.Add(cmd.ExpiresIn).UTC().Truncate(time.Microsecond)
	}
	tokenID, err := h.d.Accounts.IssueToken(ctx, nt)
	if err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return IssuedToken{}, &app.Error{Code: app.CodeNotFound, Message: "unknown tenant", Cause: err}
		}
		return IssuedToken{}, fmt.Errorf("create token: %w", err)
	}
	info := ports.TokenInfo{ID: tokenID, TenantID: tenantID, Label: cmd.Label, Permissions: perms, CreatedAt: now, ExpiresAt: nt.ExpiresAt}
	if err := h.d.auditToken(ctx, tenantID, ActionTokenCreate, cmd.Actor, info, now); err != nil {
		return IssuedToken{}, err
	}
	return IssuedToken{Token: token, Info: info}, nil
}
