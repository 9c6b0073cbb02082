package accounts

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/app"
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
		return nil, app.Invalid(map[string]string{"limit": fmt.Sprintf("must be between 1 and %d", MaxAuditLimit)})
	}
	var events []ports.AuditEvent
	err := h.tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		events, err = tx.Audit().Recent(ctx, limit)
		return err
	})
	return events, err
}

// AuditPageSize is the number of events on one page of the web interface.
const AuditPageSize = 50

// MaxAuditPages bounds paging: the web interface pages through the newest
// MaxAuditPages × AuditPageSize events (1,000, what one store read returns).
const MaxAuditPages = 20

// Page returns page n (0 is the newest) of [AuditPageSize] events, newest
// first, and whether an older page exists; validation_failed (field page)
// for n outside 0–[MaxAuditPages]-1.
func (h *AuditHandler) Page(ctx context.Context, p ports.Principal, n int) ([]ports.AuditEvent, bool, error) {
	if n < 0 || n >= MaxAuditPages {
		return nil, false, app.Invalid(map[string]string{"page": fmt.Sprintf("must be between 1 and %d", MaxAuditPages)})
	}
	var events []ports.AuditEvent
	err := h.tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		events, err = tx.Audit().Recent(ctx, (n+1)*AuditPageSize+1)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	start := min(n*AuditPageSize, len(events))
	end := min(start+AuditPageSize, len(events))
	more := len(events) > end && n+1 < MaxAuditPages
	return events[start:end], more, nil
}
