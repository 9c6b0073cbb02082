package accounts

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/app"
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
	if reason := app.CheckDisplayName(name, MaxTenantNameLen); reason != "" {
		return "", &app.Error{Code: app.CodeValidationFailed, Message: "the tenant name " + reason,
			Fields: map[string]string{"name": reason}}
	}
	id, err := a.accounts.CreateTenant(ctx, name)
	if err != nil {
		return "", fmt.Errorf("create tenant: %w", err)
	}
	return id, nil
}
