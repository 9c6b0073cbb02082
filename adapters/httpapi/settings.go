package httpapi

import (
	"net/http"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// SettingsRoutes serves the tenant's settings (GET and PUT
// /v1/tenant/settings) and a review's debug prompt logs (GET
// /v1/reviews/{id}/prompts), all tenant:manage.
type SettingsRoutes struct {
	getSettings *accounts.GetSettingsHandler
	putSettings *accounts.PutSettingsHandler
	prompts     *reviews.ListPromptsHandler
}

// NewSettingsRoutes returns the route group.
func NewSettingsRoutes(get *accounts.GetSettingsHandler, put *accounts.PutSettingsHandler, p *reviews.ListPromptsHandler) *SettingsRoutes {
	return &SettingsRoutes{getSettings: get, putSettings: put, prompts: p}
}

type debugPromptsJSON struct {
	Enabled  *bool `json:"enabled"`
	TTLHours *int  `json:"ttlHours"`
}

// settingsJSON is the body of both methods. Pointers tell a missing field
// (its default) from a zero (out of range); the ranges are the domain's.
type settingsJSON struct {
	RetentionDays *int              `json:"retentionDays"`
	DebugPrompts  *debugPromptsJSON `json:"debugPrompts"`
}

func toSettingsJSON(s settings.Settings) settingsJSON {
	days, on, ttl := s.RetentionDays(), s.DebugPrompts(), s.PromptTTLHours()
	return settingsJSON{RetentionDays: &days, DebugPrompts: &debugPromptsJSON{Enabled: &on, TTLHours: &ttl}}
}

type promptJSON struct {
	Step      string                  `json:"step"`
	Turn      int                     `json:"turn"`
	Messages  []reviews.PromptMessage `json:"messages"`
	CreatedAt time.Time               `json:"createdAt"`
	ExpiresAt time.Time               `json:"expiresAt"`
}

type promptsJSON struct {
	Prompts []promptJSON `json:"prompts"`
}

func (g *SettingsRoutes) register(rt *router) {
	rt.handle("GET /v1/tenant/settings", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		s, err := g.getSettings.Handle(r.Context(), p, accounts.GetSettings{})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, toSettingsJSON(s), nil
	})
	rt.handle("PUT /v1/tenant/settings", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req settingsJSON
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		cmd := accounts.PutSettings{RetentionDays: req.RetentionDays}
		if req.DebugPrompts != nil {
			cmd.DebugPrompts, cmd.TTLHours = req.DebugPrompts.Enabled, req.DebugPrompts.TTLHours
		}
		s, err := g.putSettings.Handle(r.Context(), p, cmd)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, toSettingsJSON(s), nil
	})
	rt.handle("GET /v1/reviews/{id}/prompts", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		prompts, err := g.prompts.Handle(r.Context(), p, reviews.ListPrompts{ReviewID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		out := promptsJSON{Prompts: make([]promptJSON, 0, len(prompts))}
		for _, pr := range prompts {
			msgs := pr.Messages
			if msgs == nil {
				msgs = []reviews.PromptMessage{}
			}
			out.Prompts = append(out.Prompts, promptJSON{Step: pr.Step, Turn: pr.Turn, Messages: msgs,
				CreatedAt: pr.CreatedAt.UTC(), ExpiresAt: pr.ExpiresAt.UTC()})
		}
		return http.StatusOK, out, nil
	})
}
