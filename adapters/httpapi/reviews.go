package httpapi

import (
	"net"
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// ReviewRoutes serves review requests and their results (repo:manage).
type ReviewRoutes struct {
	submit *reviews.SubmitReviewHandler
	get    *reviews.GetReviewHandler
}

// NewReviewRoutes returns the route group.
func NewReviewRoutes(submit *reviews.SubmitReviewHandler, get *reviews.GetReviewHandler) *ReviewRoutes {
	return &ReviewRoutes{submit: submit, get: get}
}

type reviewRequest struct {
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Diff        string            `json:"diff"`
	Files       map[string]string `json:"files"`
}

type reviewQueuedJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type reviewJSON struct {
	ID            string        `json:"id"`
	Status        string        `json:"status"`
	PromptVersion *string       `json:"promptVersion"`
	Findings      []findingJSON `json:"findings"`
	Summary       string        `json:"summary"`
	Stats         statsJSON     `json:"stats"`
	CreatedAt     *string       `json:"createdAt"`
	FinishedAt    *string       `json:"finishedAt"`
}

// findingJSON is a finding in the API (openapi.yaml: Finding).
type findingJSON struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	Evidence string `json:"evidence"`
}

// statsJSON and mcpStatsJSON are a run's stats in the API.
type statsJSON struct {
	Mcp mcpStatsJSON `json:"mcp"`
}

type mcpStatsJSON struct {
	Prompt  *string             `json:"prompt"`
	Calls   int                 `json:"calls"`
	Bytes   int                 `json:"bytes"`
	Blocked int                 `json:"blocked"`
	Servers []serverOutcomeJSON `json:"servers"`
}

// serverOutcomeJSON is one server of a run: offered, or skipped and why
// (openapi.yaml: ServerOutcome).
type serverOutcomeJSON struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Offered bool    `json:"offered"`
	Reason  *string `json:"reason"`
}

func newMcpStatsJSON(m review.McpStats) mcpStatsJSON {
	v := mcpStatsJSON{Prompt: m.Prompt, Calls: m.Calls, Bytes: m.Bytes, Blocked: m.Blocked, Servers: make([]serverOutcomeJSON, 0, len(m.Servers))}
	for _, s := range m.Servers {
		o := serverOutcomeJSON{ID: s.ID, Name: s.Name, Offered: s.Offered}
		if s.Reason != "" {
			reason := string(s.Reason)
			o.Reason = &reason
		}
		v.Servers = append(v.Servers, o)
	}
	return v
}

func newReviewJSON(r *review.Run) reviewJSON {
	findings := r.Findings()
	v := reviewJSON{
		ID: r.ID(), Status: string(r.Status()), Findings: make([]findingJSON, 0, len(findings)), Summary: r.Summary(),
		Stats:     statsJSON{Mcp: newMcpStatsJSON(r.Stats().Mcp)},
		CreatedAt: timeJSON(r.CreatedAt()), FinishedAt: timeJSON(r.FinishedAt()),
	}
	for _, f := range findings {
		v.Findings = append(v.Findings, findingJSON(f))
	}
	if pv := r.PromptVersion(); pv != "" {
		v.PromptVersion = &pv
	}
	return v
}

func (g *ReviewRoutes) register(rt *router) {
	rt.handle("POST /v1/repositories/{id}/reviews", app.PermRepoManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req reviewRequest
		if err := rt.decode(r, &req, limits.MaxReviewRequestBody); err != nil {
			return 0, nil, err
		}
		run, err := g.submit.Handle(r.Context(), p, reviews.SubmitReview{
			RepositoryID: r.PathValue("id"), Title: req.Title, Description: req.Description, Diff: req.Diff, Files: req.Files,
		})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusAccepted, reviewQueuedJSON{ID: run.ID(), Status: string(run.Status())}, nil
	})
	rt.handle("GET /v1/reviews/{id}", app.PermRepoManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		run, err := g.get.Handle(r.Context(), p, reviews.GetReview{ID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, newReviewJSON(run), nil
	})
}

// MetricsHandler serves GET /metrics (no authentication, like the health
// endpoints).
type MetricsHandler http.Handler

// MetricsRoutes registers the metrics endpoint.
type MetricsRoutes struct{ h MetricsHandler }

// NewMetricsRoutes returns the route group.
func NewMetricsRoutes(h MetricsHandler) *MetricsRoutes { return &MetricsRoutes{h: h} }

func (g *MetricsRoutes) register(rt *router) { rt.mux.Handle("GET /metrics", g.h) }

// UIHandler is the web interface (package web), served under /ui/ on the
// API's address; / redirects there. Listening tells it the address the
// server bound.
type UIHandler interface {
	http.Handler
	Listening(addr net.Addr)
}

// UIRoutes mounts the web interface.
type UIRoutes struct{ h UIHandler }

// NewUIRoutes returns the route group.
func NewUIRoutes(h UIHandler) *UIRoutes { return &UIRoutes{h: h} }

func (g *UIRoutes) listening(addr net.Addr) { g.h.Listening(addr) }

func (g *UIRoutes) register(rt *router) {
	rt.mux.Handle("/ui/", g.h)
	rt.mux.Handle("GET /{$}", g.h)
}
