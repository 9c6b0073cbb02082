package web

import (
	"net/http"
	"slices"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports"
)

// tokenForm is the create form as the admin filled it in (never the
// token).
type tokenForm struct {
	Label       string
	Permissions []string
	ExpiresIn   string
}

// Has reports whether perm is ticked.
func (f tokenForm) Has(perm string) bool { return slices.Contains(f.Permissions, perm) }

type tokensPage struct {
	Tokens []ports.TokenInfo
	// Self is the token of the session (its revoke ends this session).
	Self  string
	Form  tokenForm
	Error *formError
	// Created is a token just created, shown this once.
	Created *accounts.IssuedToken
	Revoked bool
}

func (tokensPage) title() (string, string) { return "API tokens", "tokens" }

func (u *UI) tokensData(r *http.Request, c *caller, p tokensPage) (tokensPage, error) {
	list, err := u.d.ListTokens.Handle(r.Context(), accounts.ListTokens{TenantID: c.Principal.TenantID})
	p.Tokens, p.Self = list, c.Principal.TokenID
	return p, err
}

// tokensPage lists the tenant's tokens (never a secret) with a revoke
// button each, and the create form.
func (u *UI) tokensPage(w http.ResponseWriter, r *http.Request, c *caller) {
	p, err := u.tokensData(r, c, tokensPage{Form: tokenForm{Permissions: []string{app.PermRepoManage}}, Revoked: r.URL.Query().Get("done") == "revoked"})
	if err != nil {
		u.internal(w, r, c, err)
		return
	}
	u.render(w, r, http.StatusOK, "tokens", c, p)
}

// createToken creates a token and shows it once on the answer itself
// (not after a redirect, and never cached): it is in no URL, log or
// later page.
func (u *UI) createToken(w http.ResponseWriter, r *http.Request, c *caller) {
	f := tokenForm{Label: r.PostForm.Get("label"), Permissions: r.PostForm["permissions"], ExpiresIn: r.PostForm.Get("expiresIn")}
	lifetime, err := accounts.ParseLifetime(f.ExpiresIn)
	var t accounts.IssuedToken
	if err == nil {
		t, err = u.d.CreateToken.Issue(r.Context(), accounts.CreateToken{TenantID: c.Principal.TenantID, Permissions: f.Permissions,
			Label: f.Label, ExpiresIn: lifetime, Actor: app.Actor(c.Principal)})
	}
	if err != nil {
		p, lerr := u.tokensData(r, c, tokensPage{Form: f, Error: newFormError(err, "create")})
		if lerr != nil {
			u.internal(w, r, c, lerr)
			return
		}
		u.refused(w, r, c, err, "tokens", p)
		return
	}
	p, err := u.tokensData(r, c, tokensPage{Form: tokenForm{Permissions: []string{app.PermRepoManage}}, Created: &t})
	if err != nil {
		u.internal(w, r, c, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, http.StatusCreated, "tokens", c, p)
}

// revokeToken revokes a token of the tenant; revoking the session's own
// token ends this session too (the next page is the sign-in).
func (u *UI) revokeToken(w http.ResponseWriter, r *http.Request, c *caller) {
	if _, err := u.d.RevokeToken.Handle(r.Context(), accounts.RevokeToken{TenantID: c.Principal.TenantID, ID: r.PathValue("id"), Actor: app.Actor(c.Principal)}); err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	http.Redirect(w, r, "/ui/tokens?done=revoked", http.StatusSeeOther)
}
