package httpapi

import (
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// StatusRoutes serves GET /v1/mcp/status to any valid token.
type StatusRoutes struct {
	status *app.StatusHandler
}

// NewStatusRoutes returns the status route group.
func NewStatusRoutes(status *app.StatusHandler) *StatusRoutes {
	return &StatusRoutes{status: status}
}

type statusJSON struct {
	SignedOff bool   `json:"signedOff"`
	Instance  string `json:"instance"`
	Edition   string `json:"edition"`
}

func (s *StatusRoutes) register(rt *router) {
	rt.handle("GET /v1/mcp/status", "", func(r *http.Request, p ports.Principal) (int, any, error) {
		st := s.status.Handle(r.Context(), p)
		return http.StatusOK, statusJSON{SignedOff: st.SignedOff, Instance: st.Instance.String(), Edition: st.Edition.String()}, nil
	})
}
