package httpapi_test

import (
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/netpolicy"
)

// TestPolicyRouteNeedsRepoManage: a token with tenant:manage only may not
// set a repository's MCP policy, and nothing is stored (the web form's is
// TestPolicyFormNeedsRepoManage).
func TestPolicyRouteNeedsRepoManage(t *testing.T) {
	store := newRestStore()
	store.servers[restTenantA] = map[string]bool{restServerA: true}
	tokens := restTokens{
		"admin":  {TokenID: "t1", TenantID: restTenantA, Permissions: []string{app.PermTenantManage, app.PermRepoManage}},
		"tenant": {TokenID: "t4", TenantID: restTenantA, Permissions: []string{app.PermTenantManage}},
	}
	rd := repositories.Deps{Tenants: store, Clock: restClock{}, NewID: uuid.NewString, Gates: restOpen}
	routes := []httpapi.Routes{
		httpapi.NewRepositoryRoutes(repositories.NewCreateRepositoryHandler(rd), repositories.NewGetRepositoryHandler(rd),
			repositories.NewUpdateRepositoryHandler(rd), repositories.NewListRepositoriesHandler(rd)),
		httpapi.NewPolicyRoutes(repositories.NewGetDefaultsHandler(rd), repositories.NewPutDefaultsHandler(rd),
			repositories.NewGetPolicyHandler(rd), repositories.NewPutPolicyHandler(rd), repositories.NewListPolicyServersHandler(rd)),
	}
	ts := httptest.NewServer(httpapi.NewServer("127.0.0.1:0", zerolog.Nop(), restReady{}, tokens, restOpen, netpolicy.TrustedProxies{}, routes, nil).Handler())
	t.Cleanup(ts.Close)

	_, repo := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`)
	path := "/v1/repositories/" + repo["id"].(string) + "/policy"
	status, body := call(t, ts, "tenant", "PUT", path, `{"mcp": {"mode": "on", "servers": ["`+restServerA+`"], "maxCalls": 3}}`)
	if status != 403 || errCode(body) != "forbidden" {
		t.Errorf("tenant:manage-only PUT %s = %d %v, want 403 forbidden", path, status, body)
	}
	_, got := call(t, ts, "admin", "GET", path, "")
	if mcp, _ := got["mcp"].(map[string]any); mcp["mode"] != "inherit" {
		t.Errorf("policy after the refused PUT: %v, want the untouched inherit", got)
	}
}
