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

// ListAudit is the query of GET /v1/audit?limit=N.
type ListAudit struct{ Limit int }

// ListAuditHandler lists the tenant's audit events (tenant:manage). Safe
// for concurrent use.
type ListAuditHandler struct{ d Deps }

// NewListAuditHandler returns a [ListAuditHandler].
func NewListAuditHandler(d Deps) *ListAuditHandler { return &ListAuditHandler{d: d} }

// AuditPage is the query of the audit page of the web interface: page
// Page, 0 the newest.
type AuditPage struct{ Page int }

// AuditPageHandler pages through the tenant's audit events
// (tenant:manage). Safe for concurrent use.
type AuditPageHandler struct{ d Deps }

// NewAuditPageHandler returns an [AuditPageHandler].
func NewAuditPageHandler(d Deps) *AuditPageHandler { return &AuditPageHandler{d: d} }

// Handle returns at most Limit events (1–[MaxAuditLimit]), newest first;
// validation_failed (field limit) otherwise.
func (h *ListAuditHandler) Handle(ctx context.Context, p ports.Principal, q ListAudit) ([]ports.AuditEvent, error) {
	limit := q.Limit
	if limit < 1 || limit > MaxAuditLimit {
		return nil, app.Invalid(map[string]string{"limit": fmt.Sprintf("must be between 1 and %d", MaxAuditLimit)})
	}
	var events []ports.AuditEvent
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
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

// Handle returns page n (0 is the newest) of [AuditPageSize] events, newest
// first, and whether an older page exists; validation_failed (field page)
// for n outside 0–[MaxAuditPages]-1.
func (h *AuditPageHandler) Handle(ctx context.Context, p ports.Principal, q AuditPage) ([]ports.AuditEvent, bool, error) {
	n := q.Page
	if n < 0 || n >= MaxAuditPages {
		return nil, false, app.Invalid(map[string]string{"page": fmt.Sprintf("must be between 1 and %d", MaxAuditPages)})
	}
	var events []ports.AuditEvent
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
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
