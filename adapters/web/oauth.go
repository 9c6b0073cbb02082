package web

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

// connectServer starts the OAuth code-flow connection and sends the
// browser to the authorization server (303). The pending state is bound
// to this session; the callback below completes it.
func (u *UI) connectServer(w http.ResponseWriter, r *http.Request, c *caller) {
	authURL, err := u.d.StartConnect.Handle(r.Context(), c.Principal, registry.StartConnect{
		ServerID: r.PathValue("id"), SessionID: sessionID(c.Secret), RedirectURI: u.callbackURL(),
	})
	if err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.ActionError = newFormError(err, "connect") })
		return
	}
	// Not a redirect: the page's form-action 'self' also governs where
	// the form's POST is redirected, so browsers refuse a 303 to the
	// authorization server. A page of this site goes there instead (a
	// meta refresh and a link, id="oauth-authorize"), a navigation the
	// policy leaves alone.
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, http.StatusOK, "oauth_authorize", c, authorizePage{URL: authURL})
}

type authorizePage struct {
	URL string
}

func (authorizePage) title() (string, string) { return "Connecting…", "servers" }

// CallbackPath is the OAuth redirect URI's path (QUAVON_PUBLIC_URL + it).
const CallbackPath = server.CallbackPath

func (u *UI) callbackURL() string { return *u.origin.Load() + CallbackPath }

// sessionID names the session for the connection's binding: the SHA-256
// of its cookie, which the store keys sessions by (the application
// hashes it once more before storing it with the state).
func sessionID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

type callbackPage struct {
	Continue string
}

func (callbackPage) title() (string, string) { return "Connecting…", "servers" }

// oauthCallback takes the authorization server's redirect. It changes
// state without a CSRF token, which a redirect from another site cannot
// carry: the state parameter is the defence (single use, bound to this
// session, 10 minutes). The session cookie is SameSite=Strict, so a
// browser arriving straight from the authorization server does not send
// it: the callback then answers a page that continues to the same URL
// from this site (meta refresh and a link), which does carry it.
func (u *UI) oauthCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if _, err := r.Cookie(CookieName); err != nil && r.URL.Query().Get("resumed") == "" {
		q := r.URL.Query()
		q.Set("resumed", "1")
		u.render(w, r, http.StatusOK, "oauth_continue", nil, callbackPage{Continue: CallbackPath + "?" + q.Encode()})
		return
	}
	u.view(app.PermTenantManage, u.finishConnect)(w, r)
}

func (u *UI) finishConnect(w http.ResponseWriter, r *http.Request, c *caller) {
	q := r.URL.Query()
	s, err := u.d.FinishConnect.Handle(r.Context(), c.Principal, registry.FinishConnect{
		SessionID: sessionID(c.Secret), State: q.Get("state"), Code: q.Get("code"), Iss: q.Get("iss"), Error: q.Get("error"),
	})
	if err != nil {
		e := app.AsError(err)
		if e.Code == app.CodeInternal {
			u.internal(w, r, c, err)
			return
		}
		text := "The connection was refused: " + e.Message
		for _, f := range []string{"state", "iss", "error", "code", "auth"} {
			if reason, ok := e.Fields[f]; ok {
				text = "The connection was refused: " + f + " " + reason + "."
				break
			}
		}
		u.render(w, r, e.Code.Status(), "message", c, messagePage{Heading: "Not connected", Text: text})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+s.ID()+"?done=connected", http.StatusSeeOther)
}
