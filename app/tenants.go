package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/ports"
)

// MaxTenantNameLen is the longest tenant name, in characters.
const MaxTenantNameLen = 200

// AccountAdmin creates tenants and API tokens: the operator's commands
// `codelotse tenants create` and `codelotse tokens create`. They act
// outside any tenant, so they take no principal. Safe for concurrent use.
type AccountAdmin struct {
	accounts ports.Accounts
}

// NewAccountAdmin returns an [AccountAdmin] over the accounts store.
func NewAccountAdmin(accounts ports.Accounts) *AccountAdmin {
	return &AccountAdmin{accounts: accounts}
}

// CreateTenant stores a new tenant and returns its id. name is 1–200
// printable characters, not only spaces; otherwise validation_failed
// (field "name").
func (a *AccountAdmin) CreateTenant(ctx context.Context, name string) (string, error) {
	if reason := checkDisplayName(name, MaxTenantNameLen); reason != "" {
		return "", &Error{Code: CodeValidationFailed, Message: "the tenant name " + reason,
			Fields: map[string]string{"name": reason}}
	}
	id, err := a.accounts.CreateTenant(ctx, name)
	if err != nil {
		return "", fmt.Errorf("create tenant: %w", err)
	}
	return id, nil
}

// checkDisplayName returns why name is not 1–max printable characters, or "".
func checkDisplayName(name string, max int) string {
	switch {
	case !utf8.ValidString(name):
		return "must be valid UTF-8"
	case strings.TrimSpace(name) == "":
		return "is required"
	case utf8.RuneCountInString(name) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return "must contain printable characters only"
		}
	}
	return ""
}

// notFound maps the store's ErrNotFound to the contract's not_found and
// keeps any other error as it is (internal).
func notFound(err error, what string) error {
	if errors.Is(err, ports.ErrNotFound) {
		return &Error{Code: CodeNotFound, Message: what + " not found", Cause: err}
	}
	return err
}
