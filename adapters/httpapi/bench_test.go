package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
)

type echoRoutes struct{}

func (echoRoutes) register(rt *router) {
	rt.handle("GET /v1/echo", "", func(r *http.Request, p ports.Principal) (int, any, error) {
		return http.StatusOK, map[string]string{"tenant": p.TenantID}, nil
	})
}

// BenchmarkMiddleware is the API's own cost per request, without the
// database: request log (to io.Discard), recovery, routing, bearer token
// parsing with an in-memory authenticator, and a small JSON answer.
func BenchmarkMiddleware(b *testing.B) {
	srv := NewServer("127.0.0.1:0", zerolog.New(io.Discard), okReady{}, oneToken{}, app.Gates{}, netpolicy.TrustedProxies{}, []Routes{echoRoutes{}}, nil)
	h := srv.Handler()
	req := httptest.NewRequest(http.MethodGet, "/v1/echo", nil)
	req.Header.Set("Authorization", "Bearer "+mwToken)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
