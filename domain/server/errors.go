// Package server holds the rules for a tenant's MCP server registration:
// its name, its https URL, its static credential and the entity that ties
// them to the data-sharing acknowledgement and the tool allowlist (MC1,
// MC2, MC8).
package server

import "errors"

// FieldError is a validation failure of one field. Reason is short and
// safe to show to users: it never repeats the rejected value, because that
// may be a URL with a secret in it or a credential.
type FieldError struct {
	// Field is the API field: "name", "url", "auth", "auth.token",
	// "auth.name", "auth.value", "id", "tenantId" or "tools".
	Field string
	// Reason is a short explanation such as "must be https".
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

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
