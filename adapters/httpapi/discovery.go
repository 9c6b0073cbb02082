package httpapi

import (
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// DiscoveryRoutes serves discovery, the tool allowlist and the call
// records of a server (tenant:manage).
type DiscoveryRoutes struct {
	discover *registry.DiscoverServerHandler
	save     *registry.SaveToolsHandler
	calls    *registry.ListCallsHandler
	findings *registry.Findings
	allowed  server.AllowedURLs
}

// NewDiscoveryRoutes returns the route group; allowed is the operator's
// allowlist of URLs, which a server view's status reads.
func NewDiscoveryRoutes(discover *registry.DiscoverServerHandler, save *registry.SaveToolsHandler, calls *registry.ListCallsHandler, findings *registry.Findings, allowed server.AllowedURLs) *DiscoveryRoutes {
	return &DiscoveryRoutes{discover: discover, save: save, calls: calls, findings: findings, allowed: allowed}
}

// discoveredToolJSON is the API's DiscoveredTool: one tool of a discovery.
type discoveredToolJSON struct {
	toolJSON
	Supported bool    `json:"supported"`
	Reason    *string `json:"reason"`
	// Warning is set on a supported tool whose calls would always be
	// blocked or refused, or whose format is not checked (CONTRACT §7).
	Warning string `json:"warning,omitempty"`
	// Findings are the poisoning rules' findings (CONTRACT §8), never null.
	Findings []toolFindingJSON `json:"findings"`
}

type discoveryJSON struct {
	Tools []discoveredToolJSON `json:"tools"`
}

// saveToolsRequest is the allowlist: names, the admin's descriptions and
// write confirmations. A schema or a hash in the body is an unknown field
// (bad_json): they come from the live discovery only.
type saveToolsRequest struct {
	Tools []toolChoiceRequest `json:"tools" validate:"required,dive"`
}

type toolChoiceRequest struct {
	Name            string `json:"name" validate:"required,max=256"`
	Description     string `json:"description"`
	ConfirmWrite    bool   `json:"confirmWrite"`
	ConfirmFindings bool   `json:"confirmFindings"`
}

type callJSON struct {
	Tool          string  `json:"tool"`
	Status        string  `json:"status"`
	DurationMS    int64   `json:"durationMs"`
	RequestBytes  int     `json:"requestBytes"`
	ResponseBytes int     `json:"responseBytes"`
	ArgumentsHash string  `json:"argumentsHash"`
	Removed       int     `json:"removedCharacters"`
	ReviewID      *string `json:"reviewId"`
	CreatedAt     *string `json:"createdAt"`
}

type callsJSON struct {
	Calls []callJSON `json:"calls"`
}

func (g *DiscoveryRoutes) register(rt *router) {
	rt.gated("POST /v1/mcp/servers/{id}/discover", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		list, err := g.discover.Handle(r.Context(), p, registry.DiscoverServer{ID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		out := discoveryJSON{Tools: make([]discoveredToolJSON, 0, len(list))}
		for _, a := range list {
			t := discoveredToolJSON{
				toolJSON: toolJSON{
					Name: a.Name, Description: a.Description,
					InputSchema: objectJSON(a.InputSchema), Annotations: objectJSON(a.Annotations),
					WriteCapable: a.WriteCapable, Hash: a.Hash,
				},
				Supported: a.Supported, Warning: a.Warning, Findings: newFindingsJSON(a.Findings),
			}
			if a.Reason != "" {
				reason := a.Reason
				t.Reason = &reason
			}
			out.Tools = append(out.Tools, t)
		}
		return http.StatusOK, out, nil
	})
	rt.gated("PUT /v1/mcp/servers/{id}/tools", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req saveToolsRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		choices := make([]registry.ToolChoice, len(req.Tools))
		for i, t := range req.Tools {
			choices[i] = registry.ToolChoice{Name: t.Name, Description: t.Description, ConfirmWrite: t.ConfirmWrite, ConfirmFindings: t.ConfirmFindings}
		}
		s, err := g.save.Handle(r.Context(), p, registry.SaveTools{ID: r.PathValue("id"), Tools: choices})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, NewServerView(s, g.findings, g.allowed), nil
	})
	rt.handle("GET /v1/mcp/servers/{id}/calls", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		list, err := g.calls.Handle(r.Context(), p, registry.ListCalls{ID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		out := callsJSON{Calls: make([]callJSON, 0, len(list))}
		for _, c := range list {
			v := callJSON{
				Tool: c.Tool, Status: string(c.Status), DurationMS: c.Duration.Milliseconds(),
				RequestBytes: c.RequestBytes, ResponseBytes: c.ResponseBytes,
				ArgumentsHash: c.ArgumentsHash, Removed: c.RemovedCharacters, CreatedAt: timeJSON(c.CreatedAt),
			}
			if c.ReviewID != "" {
				id := c.ReviewID
				v.ReviewID = &id
			}
			out.Calls = append(out.Calls, v)
		}
		return http.StatusOK, out, nil
	})
}
