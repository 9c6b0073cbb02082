package httpapi

import (
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// PolicyRoutes serves the tenant's MCP default (GET and PUT
// /v1/mcp/defaults, tenant:manage) and repository policies (GET and PUT
// /v1/repositories/{id}/policy, repo:manage).
type PolicyRoutes struct {
	getDefaults *repositories.GetDefaultsHandler
	putDefaults *repositories.PutDefaultsHandler
	getPolicy   *repositories.GetPolicyHandler
	putPolicy   *repositories.PutPolicyHandler
	servers     *repositories.ListPolicyServersHandler
}

// NewPolicyRoutes returns the policy route group.
func NewPolicyRoutes(getDefaults *repositories.GetDefaultsHandler, putDefaults *repositories.PutDefaultsHandler,
	getPolicy *repositories.GetPolicyHandler, putPolicy *repositories.PutPolicyHandler,
	servers *repositories.ListPolicyServersHandler) *PolicyRoutes {
	return &PolicyRoutes{getDefaults: getDefaults, putDefaults: putDefaults, getPolicy: getPolicy, putPolicy: putPolicy, servers: servers}
}

// policyServerJSON is a server as repo:manage may read it
// (openapi.yaml: PolicyServer): the choices of a policy.
type policyServerJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

type policyServersJSON struct {
	Servers []policyServerJSON `json:"servers"`
}

type mcpSectionJSON struct {
	Mode     string   `json:"mode"`
	Servers  []string `json:"servers"`
	MaxCalls int      `json:"maxCalls"`
}

func toMcpSectionJSON(s policy.McpSection) mcpSectionJSON {
	return mcpSectionJSON{Mode: s.Mode().String(), Servers: nonNil(s.Servers()), MaxCalls: s.MaxCalls()}
}

type effectiveJSON struct {
	Mode     string   `json:"mode"`
	Servers  []string `json:"servers"`
	MaxCalls int      `json:"maxCalls"`
	Source   string   `json:"source"`
}

type defaultsJSON struct {
	Mcp mcpSectionJSON `json:"mcp"`
}

type policyJSON struct {
	Mcp       mcpSectionJSON `json:"mcp"`
	Effective effectiveJSON  `json:"effective"`
	McpActive bool           `json:"mcpActive"`
}

func toPolicyJSON(v repositories.PolicyView) policyJSON {
	e := v.Effective
	return policyJSON{
		Mcp: toMcpSectionJSON(v.Stored),
		Effective: effectiveJSON{Mode: e.Mode().String(), Servers: nonNil(e.Servers()),
			MaxCalls: e.MaxCalls(), Source: e.Source().String()},
		McpActive: v.McpActive,
	}
}

// mcpRequest is the body of both PUTs. It has no validator tags on
// purpose: the gates answer before any field rule (every PUT is an MCP
// change), and the application checks the fields after them.
type mcpRequest struct {
	Mcp *mcpInputJSON `json:"mcp"`
}

type mcpInputJSON struct {
	Mode     string   `json:"mode"`
	Servers  []string `json:"servers"`
	MaxCalls *int     `json:"maxCalls"`
}

func (m mcpRequest) input() repositories.McpInput {
	if m.Mcp == nil {
		return repositories.McpInput{}
	}
	return repositories.McpInput{Mode: m.Mcp.Mode, Servers: m.Mcp.Servers, MaxCalls: m.Mcp.MaxCalls}
}

func (g *PolicyRoutes) register(rt *router) {
	rt.handle("GET /v1/mcp/defaults", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		s, err := g.getDefaults.Handle(r.Context(), p, repositories.GetDefaults{})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, defaultsJSON{Mcp: toMcpSectionJSON(s)}, nil
	})
	rt.gated("PUT /v1/mcp/defaults", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req mcpRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		s, err := g.putDefaults.Handle(r.Context(), p, repositories.PutDefaults{Mcp: req.input()})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, defaultsJSON{Mcp: toMcpSectionJSON(s)}, nil
	})
	rt.handle("GET /v1/repositories/{id}/policy", app.PermRepoManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		v, err := g.getPolicy.Handle(r.Context(), p, repositories.GetPolicy{RepositoryID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, toPolicyJSON(v), nil
	})
	rt.handle("GET /v1/repositories/{id}/policy/servers", app.PermRepoManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		list, err := g.servers.Handle(r.Context(), p, repositories.ListPolicyServers{RepositoryID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		out := policyServersJSON{Servers: make([]policyServerJSON, 0, len(list))}
		for _, s := range list {
			out.Servers = append(out.Servers, policyServerJSON{ID: s.ID, Name: s.Name, Enabled: s.Enabled})
		}
		return http.StatusOK, out, nil
	})
	rt.gated("PUT /v1/repositories/{id}/policy", app.PermRepoManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req mcpRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		v, err := g.putPolicy.Handle(r.Context(), p, repositories.PutPolicy{RepositoryID: r.PathValue("id"), Mcp: req.input()})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, toPolicyJSON(v), nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
