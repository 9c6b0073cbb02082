package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/poison"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
)

// allowlistRow is one allowlisted tool on the server page: its pinned
// snapshot, its state as of the last listing and, when it changed, the
// field-by-field comparison and the approval form.
type allowlistRow struct {
	Snap   tool.Snapshot
	State  server.ToolState
	Change *changeView
}

// changeView compares a changed tool's definition as approved (the
// server's own description, schema and annotations) with what the server
// listed last, and carries its approval form.
type changeView struct {
	// Live is nil when the server's definition could not be read.
	Live     *tool.Definition
	LiveHash string
	// NoServerText: the tool was approved before the server's own
	// description was kept, so there is no approved description to show.
	NoServerText bool
	Fields       []diffRow
	// AnnotationsOnly: only the annotations differ.
	AnnotationsOnly bool
	LiveWrite       bool
	// Findings are the poisoning rules' findings in the live definition;
	// the approval then needs ConfirmFindings.
	Findings []poison.Finding
	// Description is the admin's description in the approval form.
	Description     string
	ConfirmWrite    bool
	ConfirmFindings bool
	Error           *formError
}

// diffRow is one field of the comparison.
type diffRow struct {
	Name     string
	Old, New []diffSeg
	Differs  bool
	// OldMissing: no approved value is stored for this field.
	OldMissing bool
}

func (u *UI) allowlistRows(s *server.Server, errs map[string]*formError, forms map[string]approveForm) []allowlistRow {
	var out []allowlistRow
	for _, snap := range s.Tools() {
		st := s.ToolStatus(snap.Name())
		row := allowlistRow{Snap: snap, State: st.State}
		if st.State == server.ToolChanged {
			row.Change = newChangeView(snap, st.Live)
			if st.Live != nil {
				row.Change.Findings = u.d.Findings.Stored(s, *st.Live)
			}
			row.Change.Error = errs[snap.Name()]
			if f, ok := forms[snap.Name()]; ok {
				row.Change.Description, row.Change.ConfirmWrite, row.Change.ConfirmFindings = f.Description, f.ConfirmWrite, f.ConfirmFindings
			}
		}
		out = append(out, row)
	}
	return out
}

func newChangeView(snap tool.Snapshot, live *tool.Definition) *changeView {
	c := &changeView{Live: live, Description: snap.Description()}
	oldDesc, oldSchema, oldAnn := "", prettyJSON(snap.InputSchema()), prettyJSON(snap.Annotations())
	if d, ok := snap.ServerDefinition(); ok {
		oldDesc = d.Description()
	} else {
		c.NoServerText = true
	}
	newDesc, newSchema, newAnn := "", "", ""
	if live != nil {
		c.LiveHash, c.LiveWrite = tool.Hash(*live), tool.WriteCapable(*live)
		newDesc, newSchema, newAnn = live.Description(), prettyJSON(live.InputSchema()), prettyJSON(live.Annotations())
	}
	field := func(name, old, new string, missing bool) diffRow {
		o, n := wordDiff(old, new)
		return diffRow{Name: name, Old: o, New: n, Differs: missing || old != new, OldMissing: missing}
	}
	if live == nil {
		return c
	}
	c.Fields = []diffRow{
		field("Description (the server's)", oldDesc, newDesc, c.NoServerText),
		field("Input schema", oldSchema, newSchema, false),
		field("Annotations", oldAnn, newAnn, false),
	}
	c.AnnotationsOnly = !c.NoServerText && oldDesc == newDesc && oldSchema == newSchema && oldAnn != newAnn
	return c
}

// approveForm is what the admin typed in one approval form.
type approveForm struct {
	Description     string
	ConfirmWrite    bool
	ConfirmFindings bool
}

// approveTool approves one tool through the same use case as POST
// …/tools/{name}/approve, with the hash of the definition the page
// showed: a server that changed the tool again meanwhile is refused.
func (u *UI) approveTool(w http.ResponseWriter, r *http.Request, c *caller) {
	id, name := r.PathValue("id"), r.PathValue("name")
	f := approveForm{Description: r.PostForm.Get("description"), ConfirmWrite: r.PostForm.Get("confirm") == "on",
		ConfirmFindings: r.PostForm.Get("confirm_findings") == "on"}
	_, err := u.d.ApproveTool.Handle(r.Context(), c.Principal, registry.ApproveTool{
		ID: id, Name: name, Description: f.Description, ConfirmWrite: f.ConfirmWrite, ConfirmFindings: f.ConfirmFindings, Hash: r.PostForm.Get("hash"),
	})
	if err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) {
			p.ToolErrors = map[string]*formError{name: newFormError(err, "approve")}
			p.ToolForms = map[string]approveForm{name: f}
			p.Allowlist = u.allowlistRows(p.S, p.ToolErrors, p.ToolForms)
		})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+id+"?done=approved&tool="+url.QueryEscape(name)+"#h-pinned", http.StatusSeeOther)
}

// removeTool takes one tool off the allowlist.
func (u *UI) removeTool(w http.ResponseWriter, r *http.Request, c *caller) {
	id, name := r.PathValue("id"), r.PathValue("name")
	if _, err := u.d.RemoveTool.Handle(r.Context(), c.Principal, registry.RemoveTool{ID: id, Name: name}); err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) {
			p.ToolErrors = map[string]*formError{name: newFormError(err, "approve")}
			p.Allowlist = u.allowlistRows(p.S, p.ToolErrors, nil)
		})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+id+"?done=removed&tool="+url.QueryEscape(name)+"#h-pinned", http.StatusSeeOther)
}

// connectionTest is a connection test's result in words.
type connectionTest struct {
	OK    bool
	Tools int
	Code  string
	Words string
}

func newConnectionTest(r registry.ConnectionResult) *connectionTest {
	if r.OK {
		return &connectionTest{OK: true, Tools: r.Tools}
	}
	code := string(r.Code)
	words, ok := lastErrorWords[code]
	if !ok {
		words = "the connection failed"
	}
	return &connectionTest{Code: code, Words: words}
}

// testServer tests a registered server's connection; nothing is stored.
func (u *UI) testServer(w http.ResponseWriter, r *http.Request, c *caller) {
	res, err := u.d.TestConnection.Handle(r.Context(), c.Principal, registry.TestServer{ID: r.PathValue("id")})
	if err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.ActionError = newFormError(err, "test") })
		return
	}
	p, err := u.loadServerPage(r, c)
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	p.Test = newConnectionTest(res)
	u.render(w, r, http.StatusOK, "server", c, p)
}

// testNewServer tests the register form's server before it is saved
// (the form's second button). The form comes back as typed, without its
// secrets, with the result.
func (u *UI) testNewServer(w http.ResponseWriter, r *http.Request, c *caller) {
	f, auth := authFromForm(r)
	if auth == nil {
		auth = &registry.ServerAuth{Type: "none"}
	}
	res, err := u.d.TestConnection.HandleNew(r.Context(), c.Principal, registry.CreateServer{
		Name: f.Name, URL: f.URL, Auth: *auth, Acknowledged: f.Acknowledged,
	})
	if err != nil {
		u.refused(w, r, c, err, "server_new", newServerPage{Form: f, Error: newFormError(err, "register")})
		return
	}
	u.render(w, r, http.StatusOK, "server_new", c, newServerPage{Form: f, Test: newConnectionTest(res)})
}

// serverRow is one server in the list with its status.
type serverRow struct {
	S       *server.Server
	Status  server.Status
	Pinned  int
	Changed int
}

// statusWords are the statuses as the list and the server page say them
// (with the number of tools where it matters).
var statusWords = map[server.Status]string{
	server.StatusOutsideAllowlist: "outside the operator's allowlist",
	server.StatusNeverDiscovered:  "never discovered",
	server.StatusOK:               "ok",
	server.StatusToolsChanged:     "tools changed",
	server.StatusUnreachable:      "unreachable",
	server.StatusUnauthorized:     "unauthorized",
	server.StatusNeedsConnection:  "needs connection",
	server.StatusDisabled:         "disabled",
}

func newServerRow(s *server.Server, allowed server.AllowedURLs, now time.Time) serverRow {
	return serverRow{S: s, Status: s.StatusUnder(allowed, now), Pinned: len(s.Tools()), Changed: len(s.ChangedTools())}
}

// filterServers keeps the servers whose name contains q (any case) and,
// when status is set, whose status is status.
func filterServers(rows []serverRow, q string, status server.Status) []serverRow {
	q = strings.ToLower(strings.TrimSpace(q))
	return slices.DeleteFunc(rows, func(r serverRow) bool {
		return q != "" && !strings.Contains(strings.ToLower(r.S.Name().String()), q) || status != "" && r.Status != status
	})
}

// parseStatus accepts the statuses only ("" for all).
func parseStatus(s string) server.Status {
	if slices.Contains(server.Statuses, server.Status(s)) {
		return server.Status(s)
	}
	return ""
}
