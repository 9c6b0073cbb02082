package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

// serverForm is the register and edit form as the user filled it in.
// Secrets (token, header value) are never part of it: a refused form comes
// back without them.
type serverForm struct {
	Name         string
	URL          string
	AuthType     string
	HeaderName   string
	TokenURL     string
	ClientID     string
	Issuer       string
	Scopes       string // space-separated, as typed
	Acknowledged bool
	// MaxCallsPerMinute is the calls-per-minute limit as typed; empty
	// for none.
	MaxCallsPerMinute string
}

// callLimitOf is a server's limit as the form shows it ("" for none).
func callLimitOf(s *server.Server) string {
	if n, ok := s.MaxCallsPerMinute().PerMinute(); ok {
		return strconv.Itoa(n)
	}
	return ""
}

// callLimit reads the form's limit: nil when empty; a whole number, else
// validation_failed on maxCallsPerMinute (the use case checks the range).
func (f serverForm) callLimit() (*int, error) {
	raw := strings.TrimSpace(f.MaxCallsPerMinute)
	if raw == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return nil, app.Invalid(map[string]string{server.FieldMaxCallsPerMinute: "must be a whole number"})
	}
	return &n, nil
}

type newServerPage struct {
	Form  serverForm
	Error *formError
	// IssuerFound: Form.Issuer was just filled in from the server's
	// OAuth metadata, for the admin to confirm.
	IssuerFound bool
	// Test is the result of "Test connection" (nothing stored).
	Test *connectionTest
}

func (newServerPage) title() (string, string) { return "Register an MCP server", "servers" }

// serverFields is what the shared register/edit form component needs.
type serverFields struct {
	Form  serverForm
	Error *formError
	Edit  bool
}

// Fields is the register form.
func (p newServerPage) Fields() serverFields { return serverFields{Form: p.Form, Error: p.Error} }

// Fields is the edit form.
func (p serverPage) Fields() serverFields {
	return serverFields{Form: p.Edit, Error: p.EditError, Edit: true}
}

func (u *UI) newServerPage(w http.ResponseWriter, r *http.Request, c *caller) {
	u.render(w, r, http.StatusOK, "server_new", c, newServerPage{Form: serverForm{AuthType: "none"}})
}

// authFromForm reads the authentication fields; "keep" (edit only) means
// no change.
func authFromForm(r *http.Request) (f serverForm, auth *registry.ServerAuth) {
	f = serverForm{
		Name: r.PostForm.Get("name"), URL: r.PostForm.Get("url"), AuthType: r.PostForm.Get("auth"),
		HeaderName: r.PostForm.Get("header_name"), Acknowledged: r.PostForm.Get("acknowledged") == "on",
		TokenURL: r.PostForm.Get("token_url"), ClientID: r.PostForm.Get("client_id"), Scopes: r.PostForm.Get("scopes"),
		Issuer: r.PostForm.Get("issuer"), MaxCallsPerMinute: r.PostForm.Get("max_calls_per_minute"),
	}
	switch f.AuthType {
	case "", "keep":
		return f, nil
	case "bearer":
		return f, &registry.ServerAuth{Type: "bearer", Token: r.PostForm.Get("token")}
	case "header":
		return f, &registry.ServerAuth{Type: "header", Name: f.HeaderName, Value: r.PostForm.Get("header_value")}
	case "oauth_client_credentials":
		return f, &registry.ServerAuth{Type: f.AuthType, TokenURL: f.TokenURL, ClientID: f.ClientID,
			ClientSecret: r.PostForm.Get("client_secret"), Scopes: strings.Fields(f.Scopes)}
	case "oauth_authorization_code":
		return f, &registry.ServerAuth{Type: f.AuthType, ClientID: f.ClientID, Issuer: f.Issuer,
			ClientSecret: r.PostForm.Get("client_secret"), Scopes: strings.Fields(f.Scopes)}
	}
	return f, &registry.ServerAuth{Type: f.AuthType}
}

func (u *UI) createServer(w http.ResponseWriter, r *http.Request, c *caller) {
	f, auth := authFromForm(r)
	if auth == nil {
		auth = &registry.ServerAuth{Type: "none"}
	}
	limit, err := f.callLimit()
	var s *server.Server
	if err == nil {
		s, err = u.d.CreateServer.Handle(r.Context(), c.Principal, registry.CreateServer{
			Name: f.Name, URL: f.URL, Auth: *auth, Acknowledged: f.Acknowledged, MaxCallsPerMinute: limit,
		})
	}
	if err != nil {
		u.refused(w, r, c, err, "server_new", newServerPage{Form: f, Error: newFormError(err, "register")})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+s.ID()+"?done=registered", http.StatusSeeOther)
}

func (u *UI) editServer(w http.ResponseWriter, r *http.Request, c *caller) {
	f, auth := authFromForm(r)
	cur, err := u.d.GetServer.Handle(r.Context(), c.Principal, registry.GetServer{ID: r.PathValue("id")})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	cmd := registry.PatchServer{ID: cur.ID(), Auth: auth}
	if f.Name != cur.Name().String() {
		cmd.Name = &f.Name
	}
	if f.URL != cur.URL().String() {
		cmd.URL = &f.URL
	}
	if f.Acknowledged {
		cmd.Acknowledged = &f.Acknowledged
	}
	limit, err := f.callLimit()
	if err == nil && strings.TrimSpace(f.MaxCallsPerMinute) != callLimitOf(cur) {
		cmd.MaxCallsPerMinute = &registry.CallLimitChange{PerMinute: limit}
	}
	if err == nil {
		_, err = u.d.PatchServer.Handle(r.Context(), c.Principal, cmd)
	}
	if err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.Edit, p.EditError = f, newFormError(err, "save") })
		return
	}
	http.Redirect(w, r, "/ui/servers/"+cur.ID()+"?done=updated", http.StatusSeeOther)
}

// findIssuer fills the register form's issuer from the server's OAuth
// metadata (nothing stored, no credential sent); the admin confirms it.
func (u *UI) findIssuer(w http.ResponseWriter, r *http.Request, c *caller) {
	f, _ := authFromForm(r)
	issuer, err := u.d.FindIssuer.Handle(r.Context(), c.Principal, registry.FindIssuer{URL: f.URL})
	if err != nil {
		u.refused(w, r, c, err, "server_new", newServerPage{Form: f, Error: newFormError(err, "register")})
		return
	}
	f.Issuer = issuer
	u.render(w, r, http.StatusOK, "server_new", c, newServerPage{Form: f, IssuerFound: true})
}
