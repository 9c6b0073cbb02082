package accounts

import "github.com/google/wire"

// ProviderSet builds every use case of the module: tokens and their
// authentication, web sessions, tenant settings and the audit log.
var ProviderSet = wire.NewSet(
	wire.Struct(new(Deps), "*"),
	NewCreateTenantHandler, NewCreateTokenHandler, NewAuthenticateHandler,
	NewListTokensHandler, NewRevokeTokenHandler,
	NewSignInHandler, NewResumeSessionHandler, NewSignOutHandler,
	NewGetSettingsHandler, NewPutSettingsHandler,
	NewListAuditHandler, NewAuditPageHandler,
)
