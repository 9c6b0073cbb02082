// Package server holds the rules for a tenant's MCP server registration:
// its name, its https URL, its credential and the entity, [Server], that
// ties them to the data-sharing acknowledgement and the tool allowlist
// (MC1, MC2, MC8). A credential is none, a static bearer token or header
// (credential.go), or one of the OAuth kinds (oauth.go): client
// credentials, or the authorization code flow, bound to its issuer and
// connected by an admin. That connection, between the start and the
// authorization server's callback, is a [PendingConnection] with its
// [ConnectSecret], judged by the rules of connect.go (MC13 to MC16).
// Stored rows come back only through the Unmarshal…FromDatabase loaders,
// which check them again.
package server

import "errors"

// The fields this package names in a [field.Error]: "name", "url", "id",
// "tenantId", "auth" and its parts ("auth.type", "auth.token",
// "auth.name", "auth.value", "auth.clientId", "auth.clientSecret",
// "auth.scopes", "auth.tokenUrl", "auth.issuer", "auth.refreshToken",
// "auth.accessToken", "auth.accessExpiresAt", "auth.connection"),
// "maxCallsPerMinute".

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
