package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

type serversPage struct {
	Servers []serverRow
	// Total is the number of servers before the filter.
	Total    int
	Q        string
	Status   server.Status
	Statuses []server.Status
}

func (serversPage) title() (string, string) { return "MCP servers", "servers" }

// serversPage lists the servers with their status; ?q= searches the
// names, ?status= keeps one status.
func (u *UI) serversPage(w http.ResponseWriter, r *http.Request, c *caller) {
	list, err := u.d.ListServers.Handle(r.Context(), c.Principal, registry.ListServers{})
	if err != nil {
		u.internal(w, r, c, err)
		return
	}
	now := time.Now()
	rows := make([]serverRow, 0, len(list))
	for _, s := range list {
		rows = append(rows, newServerRow(s, now))
	}
	p := serversPage{Total: len(rows), Q: r.URL.Query().Get("q"), Status: parseStatus(r.URL.Query().Get("status")), Statuses: server.Statuses}
	p.Servers = filterServers(rows, p.Q, p.Status)
	u.render(w, r, http.StatusOK, "servers", c, p)
}

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
		Issuer: r.PostForm.Get("issuer"),
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
	s, err := u.d.CreateServer.Handle(r.Context(), c.Principal, registry.CreateServer{
		Name: f.Name, URL: f.URL, Auth: *auth, Acknowledged: f.Acknowledged,
	})
	if err != nil {
		u.refused(w, r, c, err, "server_new", newServerPage{Form: f, Error: newFormError(err, "register")})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+s.ID()+"?done=registered", http.StatusSeeOther)
}

// refused shows a form again with the refusal; an internal error is a
// page of its own.
func (u *UI) refused(w http.ResponseWriter, r *http.Request, c *caller, err error, name string, data any) {
	e := app.AsError(err)
	switch e.Code {
	case app.CodeInternal:
		u.internal(w, r, c, err)
	case app.CodeNotFound:
		u.notFound(w, r, c)
	default:
		if data == nil {
			data = messagePage{Heading: "Refused", Text: string(e.Code) + ": " + e.Message}
		}
		u.render(w, r, e.Code.Status(), name, c, data)
	}
}

func (u *UI) notFound(w http.ResponseWriter, r *http.Request, c *caller) {
	u.render(w, r, http.StatusNotFound, "message", c, messagePage{Heading: "Not found", Text: "There is no such item in your organisation."})
}

// serverPage is one server: its settings, the edit form, the pinned tools,
// a discovery when one just ran, and the last calls.
type serverPage struct {
	S         *server.Server
	Calls     []ports.ToolCall
	Edit      serverForm
	EditError *formError
	// ActionError is a refused enable, disable or discovery.
	ActionError *formError
	Discovery   *discoveryView
	Done        string
	// Status is the server's status at a glance.
	Status server.Status
	// Allowlist is every allowlisted tool with its state; the changed
	// ones with their comparison and approval form.
	Allowlist []allowlistRow
	// ToolErrors and ToolForms are a refused approval or removal, by tool.
	ToolErrors map[string]*formError
	ToolForms  map[string]approveForm
	// Test is the result of "Test connection".
	Test *connectionTest
	// ConfirmEmpty asks before a save with no tool selected empties the
	// allowlist of a server repositories use.
	ConfirmEmpty *confirmEmpty
}

// confirmEmpty is the question before an empty save: the repositories
// that lose the server, and the discovery to post again.
type confirmEmpty struct {
	Repositories []*repository.Repository
	Blob         string
}

// ChangedCount is the number of changed tools.
func (p serverPage) ChangedCount() int { return len(p.S.ChangedTools()) }

func (p serverPage) title() (string, string) { return "MCP server " + p.S.Name().String(), "servers" }

func (u *UI) loadServerPage(r *http.Request, c *caller) (serverPage, error) {
	s, err := u.d.GetServer.Handle(r.Context(), c.Principal, registry.GetServer{ID: r.PathValue("id")})
	if err != nil {
		return serverPage{}, err
	}
	calls, err := u.d.Calls.Handle(r.Context(), c.Principal, registry.ListCalls{ID: s.ID()})
	if err != nil {
		return serverPage{}, err
	}
	return serverPage{S: s, Calls: calls, Edit: serverForm{Name: s.Name().String(), URL: s.URL().String(), AuthType: "keep"},
		Status: s.Status(time.Now()), Allowlist: u.allowlistRows(s, nil, nil)}, nil
}

func (u *UI) serverPage(w http.ResponseWriter, r *http.Request, c *caller) {
	p, err := u.loadServerPage(r, c)
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	p.Done = doneMessages[r.URL.Query().Get("done")]
	if t := r.URL.Query().Get("tool"); t != "" && p.Done != "" {
		p.Done = strings.ReplaceAll(p.Done, "The tool", "The tool "+t)
	}
	u.render(w, r, http.StatusOK, "server", c, p)
}

var doneMessages = map[string]string{
	"registered": "The server is registered. Discover its tools next.",
	"saved":      "The selection is saved: the tools below are pinned with the definitions just discovered; a changed tool keeps its approved definition and stays blocked until you approve it on its own.",
	"approved":   "The tool is approved: it is pinned with the definition just discovered. No other tool changed.",
	"removed":    "The tool is removed from the allowlist. No other tool changed.",
	"updated":    "The server is updated.",
	"connected":  "The server is connected: reviews fetch access tokens with the refresh token it received.",
}

// showRefusal re-reads the server page and shows a refusal on it.
func (u *UI) showRefusal(w http.ResponseWriter, r *http.Request, c *caller, err error, edit func(*serverPage)) {
	p, loadErr := u.loadServerPage(r, c)
	if loadErr != nil {
		u.refused(w, r, c, loadErr, "message", nil)
		return
	}
	edit(&p)
	u.refused(w, r, c, err, "server", p)
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
	if _, err := u.d.PatchServer.Handle(r.Context(), c.Principal, cmd); err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.Edit, p.EditError = f, newFormError(err, "save") })
		return
	}
	http.Redirect(w, r, "/ui/servers/"+cur.ID()+"?done=updated", http.StatusSeeOther)
}

func (u *UI) enableServer(w http.ResponseWriter, r *http.Request, c *caller) {
	enabled := r.PostForm.Get("enabled") == "true"
	id := r.PathValue("id")
	if _, err := u.d.PatchServer.Handle(r.Context(), c.Principal, registry.PatchServer{ID: id, Enabled: &enabled}); err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.ActionError = newFormError(err, "enabled") })
		return
	}
	http.Redirect(w, r, "/ui/servers/"+id+"?done=updated", http.StatusSeeOther)
}

type deleteServerPage struct {
	S *server.Server
}

func (p deleteServerPage) title() (string, string) { return "Delete " + p.S.Name().String(), "servers" }

func (u *UI) deleteServerPage(w http.ResponseWriter, r *http.Request, c *caller) {
	s, err := u.d.GetServer.Handle(r.Context(), c.Principal, registry.GetServer{ID: r.PathValue("id")})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	u.render(w, r, http.StatusOK, "server_delete", c, deleteServerPage{S: s})
}

// deleteServer is allowed whatever the gates say, like the API's DELETE.
func (u *UI) deleteServer(w http.ResponseWriter, r *http.Request, c *caller) {
	if err := u.d.DeleteServer.Handle(r.Context(), c.Principal, registry.DeleteServer{ID: r.PathValue("id")}); err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	http.Redirect(w, r, "/ui/servers", http.StatusSeeOther)
}

// discoveryView is a live discovery shown on the server page: every tool
// with the selection form. Blob carries the discovered tools through a
// refused save so the page can be shown again with the user's choices;
// it is display data only: a save sends names, descriptions and
// confirmations, and the server is discovered again inside the save.
// Changed tools are shown (and approved) in the allowlist, from their
// stored state.
type discoveryView struct {
	Tools []toolRow
	Blob  string
	Error *formError
}

// toolRow is one discovered tool and the user's choice for it; State is
// its allowlist state ("" when not allowlisted).
type toolRow struct {
	registry.DiscoveredTool
	Selected        bool
	Description     string
	ConfirmWrite    bool
	ConfirmFindings bool
	Pinned          bool
	State           server.ToolState
	Error           string
}

func (u *UI) discover(w http.ResponseWriter, r *http.Request, c *caller) {
	tools, err := u.d.Discover.Handle(r.Context(), c.Principal, registry.DiscoverServer{ID: r.PathValue("id")})
	if err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.ActionError = newFormError(err, "discover") })
		return
	}
	p, err := u.loadServerPage(r, c)
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	p.Discovery = newDiscoveryView(p.S, tools, nil)
	u.render(w, r, http.StatusOK, "server", c, p)
}

// newDiscoveryView builds the selection. Without choices (a fresh
// discovery) the pinned tools are selected with their approved
// descriptions, and other tools are offered with the server's description
// as the domain sanitises it, cut to the limit: what the model would see.
// A tool with findings (MC4) is offered with an empty description: the
// admin writes the model's text, so a save without reading cannot pass
// the server's poison on.
func newDiscoveryView(s *server.Server, tools []registry.DiscoveredTool, choices map[string]registry.ToolChoice) *discoveryView {
	pinned := map[string]tool.Snapshot{}
	for _, t := range s.Tools() {
		pinned[t.Name()] = t
	}
	v := &discoveryView{Blob: encodeBlob(tools)}
	for _, t := range tools {
		row := toolRow{DiscoveredTool: t}
		if len(t.Findings) == 0 {
			row.Description = tool.SanitizeDescription(t.Description)
		}
		if snap, ok := pinned[t.Name]; ok {
			row.Pinned, row.Selected, row.Description, row.ConfirmWrite = true, true, snap.Description(), snap.WriteCapable()
			row.State = s.ToolStatus(t.Name).State
		}
		if choices != nil {
			ch, ok := choices[t.Name]
			row.Selected, row.ConfirmWrite, row.ConfirmFindings = ok, ch.ConfirmWrite, ch.ConfirmFindings
			if ok {
				row.Description = ch.Description
			}
		}
		v.Tools = append(v.Tools, row)
	}
	return v
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// encodeBlob and decodeBlob carry a discovery through a form as base64
// of its JSON, so no server text, invisible characters included, lands
// raw in an attribute.
func encodeBlob(tools []registry.DiscoveredTool) string {
	b, err := json.Marshal(tools)
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeBlob(s string) []registry.DiscoveredTool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	var tools []registry.DiscoveredTool
	if json.Unmarshal(b, &tools) != nil {
		return nil
	}
	return tools
}

// saveTools saves the selection through the same use case as PUT
// …/tools: names, descriptions and write confirmations only.
func (u *UI) saveTools(w http.ResponseWriter, r *http.Request, c *caller) {
	id := r.PathValue("id")
	selected := r.PostForm["select"]
	choices := make([]registry.ToolChoice, 0, len(selected))
	byName := map[string]registry.ToolChoice{}
	for _, name := range selected {
		ch := registry.ToolChoice{Name: name, Description: r.PostForm.Get("desc:" + name), ConfirmWrite: r.PostForm.Get("confirm:"+name) == "on",
			ConfirmFindings: r.PostForm.Get("confirm_findings:"+name) == "on"}
		choices = append(choices, ch)
		byName[name] = ch
	}
	if len(choices) == 0 && r.PostForm.Get("confirm_empty") != "yes" {
		using, err := u.d.UsingServer.Handle(r.Context(), c.Principal, repositories.RepositoriesUsingServer{ServerID: id})
		if err != nil {
			u.internal(w, r, c, err)
			return
		}
		if len(using) > 0 {
			p, err := u.loadServerPage(r, c)
			if err != nil {
				u.refused(w, r, c, err, "message", nil)
				return
			}
			blob := r.PostForm.Get("discovery")
			if tools := decodeBlob(blob); len(tools) > 0 {
				p.Discovery = newDiscoveryView(p.S, tools, byName)
			}
			p.ConfirmEmpty = &confirmEmpty{Repositories: using, Blob: blob}
			u.render(w, r, http.StatusOK, "server", c, p)
			return
		}
	}
	if _, err := u.d.SaveTools.Handle(r.Context(), c.Principal, registry.SaveTools{ID: id, Tools: choices}); err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) {
			tools := decodeBlob(r.PostForm.Get("discovery"))
			if len(tools) == 0 {
				p.ActionError = newFormError(err, "discover")
				return
			}
			p.Discovery = newDiscoveryView(p.S, tools, byName)
			p.Discovery.Error = newFormError(err, "save")
			for i, ch := range choices {
				reason := p.Discovery.Error.Field(fmt.Sprintf("tools[%d].description", i))
				if reason != "" {
					reason = "Description " + reason
				} else if p.Discovery.Error.Field(fmt.Sprintf("tools[%d].confirmFindings", i)) != "" {
					reason = confirmFindingsWords
				}
				for j := range p.Discovery.Tools {
					if p.Discovery.Tools[j].Name == ch.Name && reason != "" {
						p.Discovery.Tools[j].Error = reason
					}
				}
			}
		})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+id+"?done=saved", http.StatusSeeOther)
}

// writeHint says why a tool counts as write-capable.
func writeHint(t registry.DiscoveredTool) string {
	if !t.WriteCapable {
		return "read-only"
	}
	if strings.Contains(string(t.Annotations), `"destructiveHint":true`) {
		return "destructive"
	}
	return "may change data (not marked read-only)"
}

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
const CallbackPath = "/ui/oauth/callback"

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
