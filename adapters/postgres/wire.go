package postgres

import (
	"github.com/google/wire"

	"github.com/codelotse/codelotse/ports"
)

// ProviderSet provides the stores of a [*DB] as their ports. The *DB
// itself comes from [Open], whose cleanup the injector must run.
var ProviderSet = wire.NewSet(
	NewTenants,
	wire.Bind(new(ports.Tenants), new(*Tenants)),
	NewAccounts,
	wire.Bind(new(ports.Accounts), new(*Accounts)),
	NewSessions,
	wire.Bind(new(ports.WebSessions), new(*Sessions)),
	NewRotator,
	wire.Bind(new(ports.CredentialRotator), new(*Rotator)),
	NewPromptLogRotator,
	wire.Bind(new(ports.PromptLogRotator), new(*PromptLogRotator)),
	NewRetention,
	wire.Bind(new(ports.Retention), new(*Retention)),
	NewAuditOutbox,
	wire.Bind(new(ports.AuditOutbox), new(*AuditOutbox)),
	NewRecheckCandidates,
	wire.Bind(new(ports.RecheckCandidates), new(*RecheckCandidates)),
)
