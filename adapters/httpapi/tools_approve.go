package httpapi

import (
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// ToolApprovalRoutes serves the per-tool approval and the connection
// tests (tenant:manage; the gates of a discovery).
type ToolApprovalRoutes struct {
	approve  *registry.ApproveToolHandler
	test     *registry.TestConnectionHandler
	findings *registry.Findings
	allowed  server.AllowedURLs
}

// NewToolApprovalRoutes returns the route group; allowed is the
// operator's allowlist of URLs, which a server view's status reads.
func NewToolApprovalRoutes(approve *registry.ApproveToolHandler, test *registry.TestConnectionHandler, findings *registry.Findings, allowed server.AllowedURLs) *ToolApprovalRoutes {
	return &ToolApprovalRoutes{approve: approve, test: test, findings: findings, allowed: allowed}
}

// approveToolRequest is the body of POST …/tools/{name}/approve: the
// admin's description, the write confirmation and, optionally, the hash
// of the definition the admin reviewed. Schemas come from the live
// discovery only.
type approveToolRequest struct {
	Description     string `json:"description"`
	ConfirmWrite    bool   `json:"confirmWrite"`
	ConfirmFindings bool   `json:"confirmFindings"`
	Hash            string `json:"hash" validate:"omitempty,len=64,hexadecimal"`
}

// connectionTestJSON is the answer of a connection test.
type connectionTestJSON struct {
	OK    bool    `json:"ok"`
	Tools *int    `json:"tools,omitempty"`
	Code  *string `json:"code,omitempty"`
}

func newConnectionTestJSON(r registry.ConnectionResult) connectionTestJSON {
	if r.OK {
		n := r.Tools
		return connectionTestJSON{OK: true, Tools: &n}
	}
	c := string(r.Code)
	return connectionTestJSON{Code: &c}
}

func (g *ToolApprovalRoutes) register(rt *router) {
	rt.gated("POST /v1/mcp/servers/{id}/tools/{name}/approve", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req approveToolRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		s, err := g.approve.Handle(r.Context(), p, registry.ApproveTool{
			ID: r.PathValue("id"), Name: r.PathValue("name"), Description: req.Description,
			ConfirmWrite: req.ConfirmWrite, ConfirmFindings: req.ConfirmFindings, Hash: req.Hash,
		})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, NewServerView(s, g.findings, g.allowed), nil
	})
	rt.gated("POST /v1/mcp/servers/test", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req createServerRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		res, err := g.test.HandleNew(r.Context(), p, registry.CreateServer{
			Name: req.Name, URL: req.URL, Auth: *req.Auth.auth(), Acknowledged: req.Acknowledged,
		})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, newConnectionTestJSON(res), nil
	})
	rt.gated("POST /v1/mcp/servers/{id}/test", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		res, err := g.test.Handle(r.Context(), p, registry.TestServer{ID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, newConnectionTestJSON(res), nil
	})
}
