package ports

import (
	"context"
	"errors"
	"time"

	"github.com/codelotse/codelotse/domain/server"
)

// OAuth failures of [OAuthClient] besides the transport's sentinels
// (ErrAddressBlocked, ErrRedirectRefused, ErrTimeout, ErrResponseTooLarge,
// ErrServerUnreachable), which keep their meaning for the authorization
// server's endpoints. None of them carries a token or a secret.
var (
	// ErrOAuthMetadata: no usable protected-resource or authorization
	// server metadata (missing, malformed, not https, or an issuer that
	// differs from the one the metadata was fetched for: RFC 8414 §3.3).
	ErrOAuthMetadata = errors.New("oauth_metadata")
	// ErrOAuthRejected: the authorization server refused a token or
	// registration request (invalid_client, invalid_grant: a wrong
	// secret, an expired or replayed code, a revoked refresh token).
	ErrOAuthRejected = errors.New("oauth_rejected")
	// ErrOAuthIssuer: the MCP server names another authorization server
	// than the issuer the credential is bound to, or the issuer's
	// metadata puts the token or registration endpoint on another
	// origin than the issuer's. Nothing was sent to that server.
	ErrOAuthIssuer = errors.New("oauth_issuer")
)

// OAuthMetadata is what discovery learnt about the authorization server
// of an MCP server: its RFC 8414 (or OpenID) metadata, found through the
// server's RFC 9728 protected-resource metadata.
type OAuthMetadata struct {
	// Resource is the protected resource the metadata names; it equals
	// the MCP server's URL.
	Resource string
	// Issuer is the authorization server's issuer, checked against the
	// URL its metadata was fetched from.
	Issuer                string
	AuthorizationEndpoint server.URL
	TokenEndpoint         server.URL
	// RegistrationEndpoint is zero when the server offers no dynamic
	// client registration.
	RegistrationEndpoint server.URL
	ScopesSupported      []string
	// IssParameterSupported: the server sends RFC 9207's iss with the
	// authorization response, which must then equal Issuer.
	IssParameterSupported bool
	// CodeChallengeMethods is the metadata's
	// code_challenge_methods_supported as it came (nil when absent); the
	// domain judges it (server.AuthorizationServer.CheckFor: S256 must be
	// among them).
	CodeChallengeMethods []string
	// TokenEndpointAuthMethods is token_endpoint_auth_methods_supported as
	// it came (nil when absent).
	TokenEndpointAuthMethods []string
	// ClientIDMetadataDocuments is client_id_metadata_document_supported.
	ClientIDMetadataDocuments bool
}

// AuthorizationServer is md as the domain judges it.
func (md OAuthMetadata) AuthorizationServer() server.AuthorizationServer {
	return server.AuthorizationServer{
		Issuer: md.Issuer, AuthorizationEndpoint: md.AuthorizationEndpoint, TokenEndpoint: md.TokenEndpoint,
		RegistrationEndpoint: md.RegistrationEndpoint, IssParameterSupported: md.IssParameterSupported,
		CodeChallengeMethods: md.CodeChallengeMethods, TokenEndpointAuthMethods: md.TokenEndpointAuthMethods,
		ClientIDMetadataDocuments: md.ClientIDMetadataDocuments,
	}
}

// OAuthRegistration is the client a dynamic registration returned.
type OAuthRegistration struct {
	ClientID     string
	ClientSecret string // empty for a public client
	// ClientAuth is the method the authorization server registered (its
	// token_endpoint_auth_method), else the one asked for.
	ClientAuth server.ClientAuth
}

// OAuthCodeExchange is one authorization-code token request (RFC 6749
// §4.1.3 with PKCE's code_verifier and RFC 8707's resource).
type OAuthCodeExchange struct {
	TokenURL     server.URL
	ClientID     string
	ClientSecret string // empty for a public client
	ClientAuth   server.ClientAuth
	// Issuer is the bound issuer: the audience of a private_key_jwt
	// assertion.
	Issuer      string
	Code        string
	Verifier    string
	RedirectURI string
	Resource    server.URL
}

// OAuthTokens is a token response. The caller keeps RefreshToken sealed
// and AccessToken in memory only.
type OAuthTokens struct {
	AccessToken  string
	RefreshToken string
	ExpiresAt    time.Time // zero when the server did not say
}

// OAuthClient makes the OAuth requests of the authorization-code
// connection, every one through the guarded transport: https only, the
// address rules of MCP servers, no redirects, byte caps and timeouts.
// Access tokens during discovery and reviews are the [MCPConnector]'s
// business (it gets the credential in [MCPTarget]).
type OAuthClient interface {
	// Discover finds the authorization server of serverURL: RFC 9728
	// metadata from the server's 401 WWW-Authenticate or its well-known
	// URL (the challenge's URL only on the server's own origin), then RFC
	// 8414 or OpenID metadata, issuer checked. When issuer is not empty
	// the server must name it among its authorization servers
	// (ErrOAuthIssuer otherwise) and only its metadata is fetched. The
	// token and registration endpoints must be on the issuer's origin
	// (ErrOAuthIssuer).
	Discover(ctx context.Context, serverURL server.URL, issuer string) (OAuthMetadata, error)
	// Register performs RFC 7591 dynamic client registration at
	// md.RegistrationEndpoint, asking for the method auth. Callers allow
	// it only for the issuers the operator lists
	// (QUAVON_MCP_OAUTH_DCR_ISSUERS).
	Register(ctx context.Context, md OAuthMetadata, redirectURI string, scopes []string, auth server.ClientAuth) (OAuthRegistration, error)
	// ExchangeCode trades an authorization code for tokens.
	ExchangeCode(ctx context.Context, req OAuthCodeExchange) (OAuthTokens, error)
}

// CredentialSaver stores a credential that changed during a connection:
// an authorization server that rotates refresh tokens sends a new one
// with every refresh, and the old one stops working. The connector calls
// it before it uses the new access token.
type CredentialSaver func(ctx context.Context, cred server.Credential) error

// ClientAssertions signs the client assertions of private_key_jwt (RFC
// 7523 §2.2) with the instance's signing key ring
// (QUAVON_OAUTH_SIGNING_KEYS): the first key signs, every key is
// published at GET /oauth/jwks.json. Safe for concurrent use.
type ClientAssertions interface {
	// ClientAssertion returns a compact JWS whose claims are iss and sub
	// clientID, aud audience (the authorization server's issuer, whose
	// pinned token endpoint alone receives it), a fresh random jti, iat
	// now and exp a minute later; its
	// header names the key (kid) and its algorithm (ES256 or EdDSA).
	ClientAssertion(clientID, audience string) (string, error)
}
