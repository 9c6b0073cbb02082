package repositories

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// PolicyServer is an MCP server as a repository policy chooses it: its
// id, name and whether it is enabled. It is everything of a server that
// repo:manage may read (GET /v1/repositories/{id}/policy/servers and the
// repository page of the web interface, one rule for both); the URL, the
// credential, the tools and the calls stay tenant:manage's.
//
// Status and PinnedTools say whether a review could use the server now
// (its status at a glance, and how many allowlisted tools are in state
// pinned): the web's repository page warns about a selected server that
// would not be used, without naming the server's URL, credential, tools or
// last error. The API's PolicyServer JSON does not carry them.
type PolicyServer struct {
	ID          string
	Name        string
	Enabled     bool
	Status      server.Status
	PinnedTools int
}

// ListPolicyServers is the query of GET /v1/repositories/{id}/policy/servers.
type ListPolicyServers struct{ RepositoryID string }

// ListPolicyServersHandler lists the servers a repository's policy may
// name (repo:manage). Safe for concurrent use.
type ListPolicyServersHandler struct{ d Deps }

// NewListPolicyServersHandler returns a [ListPolicyServersHandler].
func NewListPolicyServersHandler(d Deps) *ListPolicyServersHandler {
	return &ListPolicyServersHandler{d: d}
}

// Handle returns the tenant's servers by name, as [PolicyServer]s;
// not_found for an unknown, foreign or malformed repository id.
func (h *ListPolicyServersHandler) Handle(ctx context.Context, p ports.Principal, q ListPolicyServers) ([]PolicyServer, error) {
	repoID, ok := id.Parse(q.RepositoryID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "repository not found")
	}
	var out []PolicyServer
	err := h.d.Tenants.ReadInTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Repositories().Get(ctx, repoID); err != nil {
			return app.NotFound(err, "repository")
		}
		list, err := tx.Servers().List(ctx)
		if err != nil {
			return fmt.Errorf("list servers: %w", err)
		}
		out = make([]PolicyServer, 0, len(list))
		for _, s := range list {
			pinned := 0
			for _, t := range s.Tools() {
				if s.ToolStatus(t.Name()).State == server.ToolPinned {
					pinned++
				}
			}
			out = append(out, PolicyServer{ID: s.ID(), Name: s.Name().String(), Enabled: s.Enabled(),
				Status: s.Status(h.d.Clock.Now()), PinnedTools: pinned})
		}
		return nil
	})
	return out, err
}
