package server

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// What the instance publishes for the authorization servers of MCP
// servers (docs/oauth.md, "What the instance publishes"): its client ID
// metadata document (draft-ietf-oauth-client-id-metadata-document, the
// MCP authorization of 2026-07-28), whose URL is the instance's client
// id, and the JWK set of its signing keys (QUAVON_OAUTH_SIGNING_KEYS).
// Both are paths on the public URL (QUAVON_PUBLIC_URL), served to
// anyone, the same bytes for every caller and every tenant.
const (
	ClientMetadataPath = "/oauth/client-metadata.json"
	JWKSPath           = "/oauth/jwks.json"
	// CallbackPath is the path of the OAuth redirect URI: the public URL
	// and it are the code flow's redirect_uri.
	CallbackPath = "/ui/oauth/callback"
)

// ClientName is the client_name the metadata document gives.
const ClientName = "CodeLotse"

// ErrPublicURLNotHTTPS: the public URL is not an https origin, so the
// instance has no client ID metadata document (a client id URL must be
// https).
var ErrPublicURLNotHTTPS = errors.New("the public URL must be an https origin (https://host[:port], lower-case, no path) to publish client metadata")

// clientMetadata is the document's JSON, in the draft's member order.
// It carries no secret: private_key_jwt publishes only the jwks_uri.
type clientMetadata struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ApplicationType         string   `json:"application_type"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	JWKSURI                 string   `json:"jwks_uri,omitempty"`
}

// httpsOrigin reports whether publicURL is an https origin written
// canonically: "https://" and a lower-case host with an optional port,
// nothing else (no trailing slash, path, query, fragment or user info),
// as config writes QUAVON_PUBLIC_URL. The client id is compared as a
// string, so one origin has one spelling.
func httpsOrigin(publicURL string) bool {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" ||
		u.Path != "" || u.RawPath != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return false
	}
	return publicURL == u.Scheme+"://"+u.Host && u.Host == strings.ToLower(u.Host) && u.Hostname() != "" && !strings.HasSuffix(u.Host, ":")
}

// ClientMetadataURL is the instance's client id: publicURL and
// [ClientMetadataPath]; ok is false when publicURL is not an https
// origin (the instance then has no client id URL).
func ClientMetadataURL(publicURL string) (string, bool) {
	if !httpsOrigin(publicURL) {
		return "", false
	}
	return publicURL + ClientMetadataPath, true
}

// ClientMetadataDocument is the instance's client ID metadata document
// for publicURL, an https origin ([ErrPublicURLNotHTTPS] otherwise):
// client_id its own URL, the redirect URI publicURL and [CallbackPath],
// the authorization-code and refresh-token grants, and, when signs (the
// instance has signing keys), private_key_jwt with the jwks_uri
// publicURL and [JWKSPath]; else "none" (a public client) and no
// jwks_uri. The same inputs give the same bytes.
func ClientMetadataDocument(publicURL string, signs bool) ([]byte, error) {
	clientID, ok := ClientMetadataURL(publicURL)
	if !ok {
		return nil, ErrPublicURLNotHTTPS
	}
	doc := clientMetadata{
		ClientID:                clientID,
		ClientName:              ClientName,
		ClientURI:               publicURL,
		RedirectURIs:            []string{publicURL + CallbackPath},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ApplicationType:         "web",
		TokenEndpointAuthMethod: "none",
	}
	if signs {
		doc.TokenEndpointAuthMethod = "private_key_jwt"
		doc.JWKSURI = publicURL + JWKSPath
	}
	return json.Marshal(doc)
}
