package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/server"
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
		rows = append(rows, newServerRow(s, u.d.Allowed, now))
	}
	p := serversPage{Total: len(rows), Q: r.URL.Query().Get("q"), Status: parseStatus(r.URL.Query().Get("status")), Statuses: server.Statuses}
	p.Servers = filterServers(rows, p.Q, p.Status)
	u.render(w, r, http.StatusOK, "servers", c, p)
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

// CallsPerMinute is the server's calls-per-minute limit, 0 for none.
func (p serverPage) CallsPerMinute() int {
	n, _ := p.S.MaxCallsPerMinute().PerMinute()
	return n
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
	return serverPage{S: s, Calls: calls, Edit: serverForm{Name: s.Name().String(), URL: s.URL().String(), AuthType: "keep", MaxCallsPerMinute: callLimitOf(s)},
		Status: s.StatusUnder(u.d.Allowed, time.Now()), Allowlist: u.allowlistRows(s, nil, nil)}, nil
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
