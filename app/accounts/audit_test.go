package accounts_test

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

func TestAuditRecent(t *testing.T) {
	ctx := context.Background()
	tenants := &portfake.Tenants{NewTx: func(tenantID string) *portfake.Tx {
		audit := &portfake.Audit{}
		if tenantID == tenantA {
			for _, name := range []string{"a/1", "a/2", "a/3"} {
				audit.Events = append(audit.Events, ports.AuditEvent{Action: "repository.create", Details: map[string]any{"name": name}})
			}
		}
		return &portfake.Tx{AuditLog: audit}
	}}
	other := ports.Principal{TokenID: "t2", TenantID: tenantB, Permissions: []string{app.PermTenantManage}}
	h := accounts.NewListAuditHandler(accounts.Deps{Tenants: tenants})
	events, err := h.Handle(ctx, admin(), accounts.ListAudit{Limit: 2})
	if err != nil || len(events) != 2 || events[0].Details["name"] != "a/3" {
		t.Fatalf("Recent(2) = %+v, %v; want the two newest", events, err)
	}
	if events, _ := h.Handle(ctx, other, accounts.ListAudit{Limit: accounts.MaxAuditLimit}); len(events) != 0 {
		t.Errorf("another tenant sees %d events", len(events))
	}
	for _, limit := range []int{0, -1, accounts.MaxAuditLimit + 1} {
		_, err := h.Handle(ctx, admin(), accounts.ListAudit{Limit: limit})
		if restCode(err) != app.CodeValidationFailed || app.AsError(err).Fields["limit"] == "" {
			t.Errorf("Recent(%d) = %v, want validation_failed on limit", limit, err)
		}
	}
}
