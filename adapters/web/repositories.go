package web

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

type repositoriesPage struct {
	Repositories []repositories.RepositoryListItem
	// Next is the name the next page starts after ("" on the last page).
	Next  string
	After string
	Form  repositoryForm
	Error *formError
}

type repositoryForm struct {
	Name       string
	Visibility string
}

func (repositoriesPage) title() (string, string) { return "Repositories", "repositories" }

// repositoryPageSize is the number of repositories per page.
const repositoryPageSize = 50

// loadRepositories reads the page of repositories after the name after.
func (u *UI) loadRepositories(r *http.Request, c *caller, after string) (repositoriesPage, error) {
	list, err := u.d.ListRepositories.Handle(r.Context(), c.Principal, repositories.ListRepositories{Limit: repositoryPageSize + 1, After: after})
	if err != nil {
		return repositoriesPage{}, err
	}
	p := repositoriesPage{Repositories: list, After: after, Form: repositoryForm{Visibility: "private"}}
	if len(list) > repositoryPageSize {
		p.Repositories = list[:repositoryPageSize]
		p.Next = p.Repositories[repositoryPageSize-1].Name()
	}
	return p, nil
}

func (u *UI) repositoriesPage(w http.ResponseWriter, r *http.Request, c *caller) {
	p, err := u.loadRepositories(r, c, r.URL.Query().Get("after"))
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	u.render(w, r, http.StatusOK, "repositories", c, p)
}

func (u *UI) createRepository(w http.ResponseWriter, r *http.Request, c *caller) {
	f := repositoryForm{Name: r.PostForm.Get("name"), Visibility: r.PostForm.Get("visibility")}
	repo, err := u.d.CreateRepository.Handle(r.Context(), c.Principal, repositories.CreateRepository{Name: f.Name, Visibility: f.Visibility})
	if err != nil {
		p, loadErr := u.loadRepositories(r, c, "")
		if loadErr != nil {
			u.internal(w, r, c, loadErr)
			return
		}
		p.Form, p.Error = f, newFormError(err, "create")
		u.refused(w, r, c, err, "repositories", p)
		return
	}
	http.Redirect(w, r, "/ui/repositories/"+repo.ID(), http.StatusSeeOther)
}

// policyForm is the External context (MCP) section as the user filled it in.
type policyForm struct {
	Mode     string
	Servers  []string
	MaxCalls string
}

// serverChoice is a server offered in a policy form.
type serverChoice struct {
	ID, Name string
	Enabled  bool
	Checked  bool
}

type repositoryPage struct {
	Repo     *repository.Repository
	Policy   *repositories.PolicyView
	Form     policyForm
	Servers  []serverChoice
	Names    map[string]string
	Inactive []string
	// Warnings are the servers of the effective policy that a review
	// would not use now, each with why; Offering are those it would.
	Warnings []serverWarning
	Offering []string
	// Active: the gate is open and at least one selected server would
	// offer a tool: only then does the page say MCP context is active.
	Active     bool
	Reviews    []*review.Run
	Error      *formError
	Visibility *formError
	Saved      bool
}

func (p repositoryPage) title() (string, string) {
	return "Repository " + p.Repo.Name(), "repositories"
}

func (u *UI) repositoryPage(w http.ResponseWriter, r *http.Request, c *caller) {
	p, err := u.loadRepositoryPage(r, c)
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	p.Saved = r.URL.Query().Get("done") == "saved"
	u.render(w, r, http.StatusOK, "repository", c, p)
}

// loadRepositoryPage reads the repository and, for a repo:manage caller,
// its policy, the servers to choose from and its latest reviews.
func (u *UI) loadRepositoryPage(r *http.Request, c *caller) (repositoryPage, error) {
	repo, err := u.d.GetRepository.Handle(r.Context(), c.Principal, repositories.GetRepository{ID: r.PathValue("id")})
	if err != nil {
		return repositoryPage{}, err
	}
	p := repositoryPage{Repo: repo}
	if !c.can(app.PermRepoManage) {
		return p, nil
	}
	view, err := u.d.GetPolicy.Handle(r.Context(), c.Principal, repositories.GetPolicy{RepositoryID: repo.ID()})
	if err != nil {
		return repositoryPage{}, err
	}
	p.Policy = &view
	p.Form = policyForm{Mode: view.Stored.Mode().String(), Servers: view.Stored.Servers(), MaxCalls: strconv.Itoa(view.Stored.MaxCalls())}
	// The choices are what the API lets the same principal read
	// (GET /v1/repositories/{id}/policy/servers): id, name, enabled.
	list, err := u.d.PolicyServers.Handle(r.Context(), c.Principal, repositories.ListPolicyServers{RepositoryID: repo.ID()})
	if err != nil {
		return repositoryPage{}, err
	}
	p.Servers, p.Names = policyChoices(list, p.Form.Servers)
	p.Warnings, p.Offering = serverWarnings(list, view.Effective.Servers())
	p.Active = view.McpActive && len(p.Offering) > 0
	p.Inactive = u.whyInactive(r, repo, view)
	if p.Reviews, err = u.d.ListReviews.Handle(r.Context(), c.Principal, reviews.ListReviews{RepositoryID: repo.ID()}); err != nil {
		return repositoryPage{}, err
	}
	return p, nil
}

func policyChoices(list []repositories.PolicyServer, checked []string) ([]serverChoice, map[string]string) {
	out := make([]serverChoice, 0, len(list))
	names := make(map[string]string, len(list))
	for _, s := range list {
		out = append(out, serverChoice{ID: s.ID, Name: s.Name, Enabled: s.Enabled, Checked: slices.Contains(checked, s.ID)})
		names[s.ID] = s.Name
	}
	return out, names
}

func serverChoices(list []*server.Server, checked []string) ([]serverChoice, map[string]string) {
	out := make([]serverChoice, 0, len(list))
	names := make(map[string]string, len(list))
	for _, s := range list {
		out = append(out, serverChoice{ID: s.ID(), Name: s.Name().String(), Enabled: s.Enabled(), Checked: slices.Contains(checked, s.ID())})
		names[s.ID()] = s.Name().String()
	}
	return out, names
}

// serverWarning is a selected server a review would not use now.
type serverWarning struct {
	ID, Name string
	Status   server.Status
	Text     string
}

// serverWarnings checks each server of the effective policy as the next
// review would use it: enabled, connected (OAuth code flow), not failing
// at its last listing, and with at least one pinned tool (changed and
// gone tools are not offered). offering names the servers that pass.
func serverWarnings(list []repositories.PolicyServer, selected []string) (warnings []serverWarning, offering []string) {
	byID := make(map[string]repositories.PolicyServer, len(list))
	for _, s := range list {
		byID[s.ID] = s
	}
	for _, id := range selected {
		s, ok := byID[id]
		if !ok {
			continue // deleted: the policy's effective list no longer counts it
		}
		var text string
		switch {
		case s.Status == server.StatusDisabled:
			text = "is disabled: reviews skip it until an admin enables it."
		case s.Status == server.StatusNeedsConnection:
			text = "needs an OAuth connection: an admin must connect it on its page before a review can use it."
		case s.Status == server.StatusUnauthorized:
			text = "currently fails: it refused the credential at its last listing; an admin must fix its authentication."
		case s.Status == server.StatusUnreachable:
			text = "currently fails: its last listing did not work (unreachable, too slow, or not speaking MCP as expected)."
		case s.PinnedTools == 0 && s.Status == server.StatusToolsChanged:
			text = "has no pinned tool: every allowlisted tool changed or is gone from the server; an admin must approve or remove them."
		case s.PinnedTools == 0:
			text = "has no pinned tool: an admin must select some of its tools (or approve or remove the changed and gone ones)."
		}
		if text != "" {
			warnings = append(warnings, serverWarning{ID: id, Name: s.Name, Status: s.Status, Text: text})
			continue
		}
		offering = append(offering, s.Name)
	}
	return warnings, offering
}

// whyInactive gives the reasons the gate closes for this repository, in
// the gate's order; none when MCP context is active.
func (u *UI) whyInactive(r *http.Request, repo *repository.Repository, v repositories.PolicyView) []string {
	if v.McpActive {
		return nil
	}
	var out []string
	st := u.d.Status.Handle(r.Context(), ports.Principal{})
	if !st.SignedOff {
		out = append(out, "MCP context awaits the security sign-off.")
	}
	if !st.Instance.Allowed() {
		out = append(out, "This instance does not allow MCP context.")
	}
	if repo.Visibility() == policy.VisibilityPublic {
		out = append(out, "The repository is public: MCP context never runs on public repositories.")
	}
	if v.Effective.Mode() != policy.ModeOn {
		out = append(out, "The effective mode is off (source: "+v.Effective.Source().String()+").")
	}
	if len(v.Effective.Servers()) == 0 {
		out = append(out, "No MCP server is selected.")
	}
	if len(out) == 0 {
		out = append(out, "None of the selected servers can be used.")
	}
	return out
}

func policyInput(r *http.Request) (policyForm, repositories.McpInput) {
	f := policyForm{Mode: r.PostForm.Get("mode"), Servers: r.PostForm["servers"], MaxCalls: r.PostForm.Get("maxCalls")}
	in := repositories.McpInput{Mode: f.Mode, Servers: f.Servers}
	if in.Servers == nil {
		in.Servers = []string{}
	}
	if f.MaxCalls != "" {
		n, err := strconv.Atoi(f.MaxCalls)
		if err != nil {
			n = -1 // not a number: the use case's range check refuses it with its own reason
		}
		in.MaxCalls = &n
	}
	return f, in
}

func (u *UI) putPolicy(w http.ResponseWriter, r *http.Request, c *caller) {
	f, in := policyInput(r)
	id := r.PathValue("id")
	if _, err := u.d.PutPolicy.Handle(r.Context(), c.Principal, repositories.PutPolicy{RepositoryID: id, Mcp: in}); err != nil {
		p, loadErr := u.loadRepositoryPage(r, c)
		if loadErr != nil {
			u.refused(w, r, c, loadErr, "message", nil)
			return
		}
		p.Form, p.Error = f, newFormError(err, "policy")
		checkServers(p.Servers, f.Servers)
		u.refused(w, r, c, err, "repository", p)
		return
	}
	http.Redirect(w, r, "/ui/repositories/"+id+"?done=saved", http.StatusSeeOther)
}

// checkServers marks the servers the user had ticked in a refused form.
func checkServers(in []serverChoice, checked []string) {
	for i := range in {
		in[i].Checked = slices.Contains(checked, in[i].ID)
	}
}

func (u *UI) setVisibility(w http.ResponseWriter, r *http.Request, c *caller) {
	id := r.PathValue("id")
	if _, err := u.d.UpdateRepository.Handle(r.Context(), c.Principal, repositories.UpdateRepository{ID: id, Visibility: r.PostForm.Get("visibility")}); err != nil {
		p, loadErr := u.loadRepositoryPage(r, c)
		if loadErr != nil {
			u.refused(w, r, c, loadErr, "message", nil)
			return
		}
		p.Visibility = newFormError(err, "visibility")
		u.refused(w, r, c, err, "repository", p)
		return
	}
	http.Redirect(w, r, "/ui/repositories/"+id, http.StatusSeeOther)
}

type defaultsPage struct {
	Form    policyForm
	Servers []serverChoice
	Error   *formError
	Saved   bool
}

func (defaultsPage) title() (string, string) { return "Organisation defaults", "defaults" }

func (u *UI) loadDefaults(r *http.Request, c *caller) (defaultsPage, error) {
	s, err := u.d.GetDefaults.Handle(r.Context(), c.Principal, repositories.GetDefaults{})
	if err != nil {
		return defaultsPage{}, err
	}
	list, err := u.d.ListServers.Handle(r.Context(), c.Principal, registry.ListServers{})
	if err != nil {
		return defaultsPage{}, err
	}
	p := defaultsPage{Form: policyForm{Mode: s.Mode().String(), Servers: s.Servers(), MaxCalls: strconv.Itoa(s.MaxCalls())}}
	p.Servers, _ = serverChoices(list, p.Form.Servers)
	return p, nil
}

func (u *UI) defaultsPage(w http.ResponseWriter, r *http.Request, c *caller) {
	p, err := u.loadDefaults(r, c)
	if err != nil {
		u.internal(w, r, c, err)
		return
	}
	p.Saved = r.URL.Query().Get("done") == "saved"
	u.render(w, r, http.StatusOK, "defaults", c, p)
}

func (u *UI) putDefaults(w http.ResponseWriter, r *http.Request, c *caller) {
	f, in := policyInput(r)
	if _, err := u.d.PutDefaults.Handle(r.Context(), c.Principal, repositories.PutDefaults{Mcp: in}); err != nil {
		p, loadErr := u.loadDefaults(r, c)
		if loadErr != nil {
			u.internal(w, r, c, loadErr)
			return
		}
		p.Form, p.Error = f, newFormError(err, "policy")
		checkServers(p.Servers, f.Servers)
		u.refused(w, r, c, err, "defaults", p)
		return
	}
	http.Redirect(w, r, "/ui/defaults?done=saved", http.StatusSeeOther)
}

// policyFields is what the shared policy form component needs.
type policyFields struct {
	Inherit bool
	Form    policyForm
	Servers []serverChoice
	Error   *formError
}

// Fields is the repository's policy form.
func (p repositoryPage) Fields() policyFields {
	return policyFields{Inherit: true, Form: p.Form, Servers: p.Servers, Error: p.Error}
}

// Fields is the organisation default's form (no inherit: nothing above it).
func (p defaultsPage) Fields() policyFields {
	return policyFields{Form: p.Form, Servers: p.Servers, Error: p.Error}
}
