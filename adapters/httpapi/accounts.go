package httpapi

import "github.com/codelotse/codelotse/app/accounts"

// The application's token authenticator is what the server authenticates
// with; tenants are created by the CLI only, tokens by the CLI and by
// tenant admins (tokens.go).
var _ Authenticator = (*accounts.AuthenticateHandler)(nil)
