package httpapi

import (
	"net/http"

	"github.com/codelotse/codelotse/domain/server"
)

// OAuthPublic is what the instance publishes for the authorization
// servers of MCP servers (docs/oauth.md, "What the instance publishes").
type OAuthPublic struct {
	// PublicURL is QUAVON_PUBLIC_URL. The two routes exist only when it
	// is an https origin; otherwise they are unknown paths (404).
	PublicURL string
	// JWKS is the signing ring's JWK set (QUAVON_OAUTH_SIGNING_KEYS),
	// empty when the instance has no signing keys: the client metadata
	// then names no jwks_uri and GET /oauth/jwks.json answers 404.
	JWKS []byte
}

// OAuthPublicRoutes serves GET /oauth/client-metadata.json (the client ID
// metadata document) and GET /oauth/jwks.json (the signing keys' public
// parts): public routes, without authentication, tenant or gate, the
// same bytes for every caller.
type OAuthPublicRoutes struct {
	metadata []byte // nil: not routed (the public URL is not https)
	jwks     []byte
}

// NewOAuthPublicRoutes builds both documents once, from p.
func NewOAuthPublicRoutes(p OAuthPublic) (*OAuthPublicRoutes, error) {
	if _, ok := server.ClientMetadataURL(p.PublicURL); !ok {
		return &OAuthPublicRoutes{}, nil
	}
	doc, err := server.ClientMetadataDocument(p.PublicURL, len(p.JWKS) > 0)
	if err != nil {
		return nil, err
	}
	return &OAuthPublicRoutes{metadata: doc, jwks: append([]byte(nil), p.JWKS...)}, nil
}

// publicCache is the Cache-Control of both documents: an authorization
// server may keep them an hour.
const publicCache = "public, max-age=3600"

func (g *OAuthPublicRoutes) register(rt *router) {
	if g.metadata == nil {
		return
	}
	rt.mux.HandleFunc("GET "+server.ClientMetadataPath, func(w http.ResponseWriter, r *http.Request) {
		writePublic(w, g.metadata)
	})
	if len(g.jwks) == 0 {
		return // no signing keys: the JWKS path is unknown (404)
	}
	rt.mux.HandleFunc("GET "+server.JWKSPath, func(w http.ResponseWriter, r *http.Request) {
		writePublic(w, g.jwks)
	})
}

// writePublic answers a published document: the same bytes to everyone.
func writePublic(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", publicCache)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
