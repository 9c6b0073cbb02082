package accounts

import "github.com/google/wire"

// ProviderSet builds every use case of the module: tokens and their
// authentication, web sessions, tenant settings and the audit log.
var ProviderSet = wire.NewSet(NewAccountAdmin, NewAuthenticator, NewSessionHandler, NewSettingsHandler, NewAuditHandler)
