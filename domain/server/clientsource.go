package server

import (
	"errors"
	"slices"
)

// ClientSource is where a code-flow connection gets its client.
type ClientSource int

// The sources, in the order they are tried.
const (
	// ClientGiven: the admin gave a client id (pre-registration).
	ClientGiven ClientSource = iota + 1
	// ClientFromDocument: the instance's client ID metadata document,
	// its https URL the client id, no registration (MCP 2026-07-28).
	ClientFromDocument
	// ClientRegistration: RFC 7591 dynamic registration, only at an issuer
	// the operator lists.
	ClientRegistration
)

// ErrClientAuthUnsupported: the authorization server announces token
// endpoint authentication methods without the client's.
var ErrClientAuthUnsupported = errors.New("the authorization server does not accept the client's authentication method")

// ClientSourceFor is where a connection of o at a gets its client: the
// admin's client id; else the client ID metadata document when a
// announces support, the instance publishes one (documentURL not empty:
// an https QUAVON_PUBLIC_URL) and a takes the document's own method
// ([DocumentAuth] of signs: the document is the same for every server,
// so its client authenticates only as it declares); else dynamic
// registration where [AuthorizationServer.CheckRegistration] allows it,
// whose error is returned otherwise.
func (a AuthorizationServer) ClientSourceFor(o OAuth, documentURL string, signs bool, dcrIssuers []string) (ClientSource, error) {
	switch {
	case !o.NeedsRegistration():
		return ClientGiven, nil
	case a.ClientIDMetadataDocuments && documentURL != "" && a.accepts(DocumentAuth(signs)):
		return ClientFromDocument, nil
	}
	if err := a.CheckRegistration(dcrIssuers); err != nil {
		return 0, err
	}
	return ClientRegistration, nil
}

// accepts reports whether a announces m, or announces nothing (RFC
// 8414's default: client_secret_basic only).
func (a AuthorizationServer) accepts(m ClientAuth) bool {
	if a.TokenEndpointAuthMethods == nil {
		return m == ClientSecretBasic || m == ClientAuthNone
	}
	return slices.Contains(a.TokenEndpointAuthMethods, string(m))
}

// CheckClientAuth refuses a client whose method a's list leaves out
// ([ErrClientAuthUnsupported]), before anything is sent. Without a list
// the admin's method stands.
func (a AuthorizationServer) CheckClientAuth(m ClientAuth) error {
	if a.TokenEndpointAuthMethods != nil && !slices.Contains(a.TokenEndpointAuthMethods, string(m)) {
		return ErrClientAuthUnsupported
	}
	return nil
}

// RegistrationAuth is the method a dynamic registration asks for: the
// first of client_secret_basic, client_secret_post and none that a
// accepts (client_secret_basic when it announces none of them).
func (a AuthorizationServer) RegistrationAuth() ClientAuth {
	for _, m := range []ClientAuth{ClientSecretBasic, ClientSecretPost, ClientAuthNone} {
		if a.accepts(m) {
			return m
		}
	}
	return ClientSecretBasic
}

// DocumentAuth is the method the instance's metadata document declares
// (server.ClientMetadataDocument): private_key_jwt when the instance
// signs, else none (a public client).
func DocumentAuth(signs bool) ClientAuth {
	if signs {
		return PrivateKeyJWT
	}
	return ClientAuthNone
}
