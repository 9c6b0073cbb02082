package accounts_test

import (
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

const (
	tenantA   = "aaaaaaaa-0000-4000-8000-000000000001"
	tenantB   = "bbbbbbbb-0000-4000-8000-000000000002"
	revReview = "77777777-0000-4000-8000-000000000001"
)

// admin is a tenant:manage principal of tenantA.
func admin() ports.Principal {
	return ports.Principal{TokenID: "t1", TenantID: tenantA, Permissions: []string{app.PermTenantManage}}
}
