// Package server holds the rules for a tenant's MCP server registration:
// its name, its https URL, its static credential and the entity that ties
// them to the data-sharing acknowledgement and the tool allowlist (MC1,
// MC2, MC8).
package server

import "errors"

// The fields this package names in a [field.Error]: "name", "url", "auth",
// "auth.token", "auth.name", "auth.value", "id", "tenantId" or "tools".

// Errors of [NewServer] and [Server.Apply].
var (
	// ErrAcknowledgementRequired: creating a server or changing its URL
	// without the data-sharing acknowledgement (acknowledgement_required).
	ErrAcknowledgementRequired = errors.New("the data-sharing acknowledgement is required")
	// ErrCredentialRequired: moving a server that has a credential to
	// another host without giving the credential again (credential_required),
	// so a stored secret cannot be redirected to a host of someone's choosing.
	ErrCredentialRequired = errors.New("a new credential is required when the host changes")
	// ErrTooManyTools: an allowlist above limits.MaxToolsPerServer.
	ErrTooManyTools = errors.New("too many tools")
)
