package httpapi

import "github.com/codelotse/codelotse/app/accounts"

// The application's token authenticator is what the server authenticates
// with; tenants and tokens themselves are created by the CLI only, so
// there are no account routes.
var _ Authenticator = (*accounts.AuthenticateHandler)(nil)
