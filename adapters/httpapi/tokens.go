package httpapi

import (
	stdjson "encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports"
)

// TokenRoutes serves the tenant's API tokens (tenant:manage): GET, POST
// /v1/tokens and DELETE /v1/tokens/{id}. The secret is in the answer to
// POST alone, once.
type TokenRoutes struct {
	create *accounts.CreateTokenHandler
	list   *accounts.ListTokensHandler
	revoke *accounts.RevokeTokenHandler
}

// NewTokenRoutes returns the route group.
func NewTokenRoutes(c *accounts.CreateTokenHandler, l *accounts.ListTokensHandler, r *accounts.RevokeTokenHandler) *TokenRoutes {
	return &TokenRoutes{create: c, list: l, revoke: r}
}

// TokenView is a token as listed: never the secret.
type TokenView struct {
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	Permissions []string `json:"permissions"`
	CreatedAt   *string  `json:"createdAt"`
	LastUsedAt  *string  `json:"lastUsedAt"`
	ExpiresAt   *string  `json:"expiresAt"`
}

// NewTokenView is the view of t.
func NewTokenView(t ports.TokenInfo) TokenView {
	perms := t.Permissions
	if perms == nil {
		perms = []string{}
	}
	return TokenView{ID: t.ID, Label: t.Label, Permissions: perms, CreatedAt: timeJSON(t.CreatedAt),
		LastUsedAt: timeJSON(t.LastUsedAt), ExpiresAt: timeJSON(t.ExpiresAt)}
}

type tokenListJSON struct {
	Tokens []TokenView `json:"tokens"`
}

// createdTokenJSON is the answer to POST: the token, shown this once,
// and its view.
type createdTokenJSON struct {
	Token string `json:"token"`
	TokenView
}

// createTokenRequest is the body of POST /v1/tokens.
type createTokenRequest struct {
	Label       string   `json:"label" validate:"max=400"`
	Permissions []string `json:"permissions" validate:"required,max=2,dive,max=64"`
	// ExpiresIn is a duration such as "90d", "720h" or "30m", or whole
	// seconds as a number (OAuth's expires_in); absent, null or "" for a
	// token that never expires.
	ExpiresIn lifetimeJSON `json:"expiresIn"`
}

// lifetimeJSON is expiresIn as given: a duration string, or whole seconds
// as a JSON number (written "<n>s" for accounts.ParseLifetime).
type lifetimeJSON string

// UnmarshalJSON takes a string, an integer or null.
func (l *lifetimeJSON) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*l = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		err := stdjson.Unmarshal(b, &s)
		*l = lifetimeJSON(s)
		return err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errors.New("expiresIn must be a duration string or whole seconds")
	}
	*l = lifetimeJSON(strconv.FormatInt(n, 10) + "s")
	return nil
}

func (g *TokenRoutes) register(rt *router) {
	rt.handle("GET /v1/tokens", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		list, err := g.list.Handle(r.Context(), accounts.ListTokens{TenantID: p.TenantID})
		if err != nil {
			return 0, nil, err
		}
		out := tokenListJSON{Tokens: make([]TokenView, 0, len(list))}
		for _, t := range list {
			out.Tokens = append(out.Tokens, NewTokenView(t))
		}
		return http.StatusOK, out, nil
	})
	rt.handle("POST /v1/tokens", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req createTokenRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		lifetime, err := accounts.ParseLifetime(string(req.ExpiresIn))
		if err != nil {
			return 0, nil, err
		}
		t, err := g.create.Issue(r.Context(), accounts.CreateToken{TenantID: p.TenantID, Permissions: req.Permissions,
			Label: req.Label, ExpiresIn: lifetime, Actor: app.Actor(p)})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, createdTokenJSON{Token: t.Token, TokenView: NewTokenView(t.Info)}, nil
	})
	rt.handle("DELETE /v1/tokens/{id}", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		if _, err := g.revoke.Handle(r.Context(), accounts.RevokeToken{TenantID: p.TenantID, ID: r.PathValue("id"), Actor: app.Actor(p)}); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	})
}
