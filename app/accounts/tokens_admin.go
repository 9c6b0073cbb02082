package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/ports"
)

// Token lifecycle limits (docs/tokens.md).
const (
	// MaxTokenLabelLen is the longest label, in characters.
	MaxTokenLabelLen = 100
	// MinTokenLifetime is the shortest expiry a token may be given.
	MinTokenLifetime = time.Minute
	// MaxTokenLifetime is the longest expiry (ten years).
	MaxTokenLifetime = 3650 * 24 * time.Hour
)

// Audit actions of the token lifecycle (GET /v1/audit).
const (
	ActionTokenCreate = "token.create"
	ActionTokenRevoke = "token.revoke"
)

// OperatorActor is the audit actor of the operator's commands.
const OperatorActor = "operator"

// now is the deps' clock.
func (d Deps) now() time.Time { return d.Clock.Now() }

// checkLabel: at most MaxTokenLabelLen characters of valid UTF-8, no
// control characters (a NUL byte included).
func checkLabel(label string) error {
	reason := ""
	switch {
	case !utf8.ValidString(label):
		reason = "must be valid UTF-8"
	case utf8.RuneCountInString(label) > MaxTokenLabelLen:
		reason = fmt.Sprintf("must be at most %d characters", MaxTokenLabelLen)
	case strings.IndexFunc(label, unicode.IsControl) >= 0:
		reason = "must not contain control characters"
	}
	if reason == "" {
		return nil
	}
	return &app.Error{Code: app.CodeValidationFailed, Message: "label " + reason, Fields: map[string]string{"label": reason}}
}

// ParseLifetime reads an expiry such as "90d", "720h" or "30m" (Go's
// durations, plus whole days as "Nd"); "" is none. Zero or less ("0d",
// "0s", "-1h") is validation_failed: only an absent expiry means never.
func ParseLifetime(s string) (time.Duration, error) {
	bad := &app.Error{Code: app.CodeValidationFailed, Message: "expiresIn must be a duration such as 90d, 720h or 30m",
		Fields: map[string]string{"expiresIn": "must be a duration such as 90d, 720h or 30m"}}
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n := 0
		if days == "" || len(days) > 5 {
			return 0, bad
		}
		for _, c := range days {
			if c < '0' || c > '9' {
				return 0, bad
			}
			n = n*10 + int(c-'0')
		}
		if n == 0 {
			return 0, bad // "0d" is no lifetime, not "never"
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// auditToken appends a token event to the tenant's audit log: label,
// permissions and expiry, never the token or its hash.
func (d Deps) auditToken(ctx context.Context, tenantID, action, actor string, t ports.TokenInfo, at time.Time) error {
	if actor == "" {
		actor = OperatorActor
	}
	details := map[string]any{"label": t.Label, "permissions": append([]string{}, t.Permissions...)}
	if !t.ExpiresAt.IsZero() {
		details["expiresAt"] = t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return d.Tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Audit().Append(ctx, ports.AuditEvent{Action: action, Actor: actor, Target: t.ID, At: at, Details: details})
	})
}

// ListTokens lists a tenant's tokens: GET /v1/tokens (the caller's
// tenant) and `codelotse tokens list --tenant ID`.
type ListTokens struct{ TenantID string }

// ListTokensHandler lists tokens. Safe for concurrent use.
type ListTokensHandler struct{ d Deps }

// NewListTokensHandler returns a [ListTokensHandler].
func NewListTokensHandler(d Deps) *ListTokensHandler { return &ListTokensHandler{d: d} }

// Handle returns the tenant's tokens, oldest first, expired ones included
// (their expiry says so); never a secret. validation_failed for a tenant
// id that is not a UUID.
func (h *ListTokensHandler) Handle(ctx context.Context, q ListTokens) ([]ports.TokenInfo, error) {
	tenantID, ok := id.Parse(q.TenantID)
	if !ok {
		return nil, &app.Error{Code: app.CodeValidationFailed, Message: "the tenant id must be a UUID", Fields: map[string]string{"tenant": "must be a UUID"}}
	}
	list, err := h.d.Accounts.ListTokens(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return list, nil
}

// RevokeToken revokes a token: DELETE /v1/tokens/{id} (TenantID the
// caller's) and `codelotse tokens revoke ID` (TenantID "": any tenant).
type RevokeToken struct {
	TenantID string
	ID       string
	Actor    string // "" is the operator
}

// RevokeTokenHandler revokes tokens. Safe for concurrent use.
type RevokeTokenHandler struct{ d Deps }

// NewRevokeTokenHandler returns a [RevokeTokenHandler].
func NewRevokeTokenHandler(d Deps) *RevokeTokenHandler { return &RevokeTokenHandler{d: d} }

// Handle deletes the token, so it fails at once on every replica and the
// web sessions opened with it end, and audits token.revoke in the token's
// tenant. not_found for an unknown id or one of another tenant (the same
// answer).
func (h *RevokeTokenHandler) Handle(ctx context.Context, cmd RevokeToken) (ports.TokenInfo, error) {
	tokenID, ok := id.Parse(cmd.ID)
	if !ok {
		return ports.TokenInfo{}, app.Fail(app.CodeNotFound, "unknown token")
	}
	info, err := h.d.Accounts.RevokeToken(ctx, cmd.TenantID, tokenID)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.TokenInfo{}, &app.Error{Code: app.CodeNotFound, Message: "unknown token", Cause: err}
	}
	if err != nil {
		return ports.TokenInfo{}, fmt.Errorf("revoke token: %w", err)
	}
	if err := h.d.auditToken(ctx, info.TenantID, ActionTokenRevoke, cmd.Actor, info, h.d.now()); err != nil {
		return ports.TokenInfo{}, err
	}
	return info, nil
}
