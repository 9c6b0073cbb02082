package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports"
)

// AuditRoutes serves GET /v1/audit?limit=N (tenant:manage).
type AuditRoutes struct {
	audit *accounts.ListAuditHandler
}

// NewAuditRoutes returns the audit route group.
func NewAuditRoutes(audit *accounts.ListAuditHandler) *AuditRoutes {
	return &AuditRoutes{audit: audit}
}

type auditEventJSON struct {
	Action  string         `json:"action"`
	Actor   string         `json:"actor"`
	Target  string         `json:"target"`
	At      time.Time      `json:"at"`
	Details map[string]any `json:"details"`
}

type auditJSON struct {
	Events []auditEventJSON `json:"events"`
}

func (g *AuditRoutes) register(rt *router) {
	rt.handle("GET /v1/audit", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		limit, err := queryLimit(r, accounts.DefaultAuditLimit, accounts.MaxAuditLimit)
		if err != nil {
			return 0, nil, err
		}
		events, err := g.audit.Handle(r.Context(), p, accounts.ListAudit{Limit: limit})
		if err != nil {
			return 0, nil, err
		}
		out := auditJSON{Events: make([]auditEventJSON, 0, len(events))}
		for _, e := range events {
			details := e.Details
			if details == nil {
				details = map[string]any{}
			}
			out.Events = append(out.Events, auditEventJSON{
				Action: e.Action, Actor: e.Actor, Target: e.Target, At: e.At.UTC(), Details: details,
			})
		}
		return http.StatusOK, out, nil
	})
}

// queryLimit reads ?limit=N: def when absent, validation_failed (limit)
// when it is not an integer. The use case checks the range.
func queryLimit(r *http.Request, def, max int) (int, error) {
	q := r.URL.Query()
	if !q.Has("limit") {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get("limit"))
	if err != nil {
		return 0, app.Invalid(map[string]string{"limit": fmt.Sprintf("must be an integer between 1 and %d", max)})
	}
	return n, nil
}
