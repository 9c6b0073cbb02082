package app

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/ports"
)

// Bounds of GET /v1/audit?limit=N.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 200
)

// AuditHandler lists the tenant's audit events (tenant:manage). Safe for
// concurrent use.
type AuditHandler struct {
	tenants ports.Tenants
}

// NewAuditHandler returns an [AuditHandler].
func NewAuditHandler(tenants ports.Tenants) *AuditHandler { return &AuditHandler{tenants: tenants} }

// Recent returns at most limit events (1–[MaxAuditLimit]), newest first;
// validation_failed (field limit) otherwise.
func (h *AuditHandler) Recent(ctx context.Context, p ports.Principal, limit int) ([]ports.AuditEvent, error) {
	if limit < 1 || limit > MaxAuditLimit {
		return nil, Invalid(map[string]string{"limit": fmt.Sprintf("must be between 1 and %d", MaxAuditLimit)})
	}
	var events []ports.AuditEvent
	err := h.tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		events, err = tx.Audit().Recent(ctx, limit)
		return err
	})
	return events, err
}
