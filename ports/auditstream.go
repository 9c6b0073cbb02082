package ports

import (
	"context"
	"encoding/json"
	"time"
)

// The types of an [OutboxEntry]: an audit event or a call record.
const (
	OutboxAudit = "audit"
	OutboxCall  = "call"
)

// OutboxEntry is one event of the audit stream as the outbox holds it:
// written in the transaction that stored the audit event or call record
// it copies (when the stream is on), and deleted once delivered.
type OutboxEntry struct {
	// Seq orders a tenant's entries: they are delivered in its order.
	Seq int64
	// ID is the event's id, the same at every delivery attempt: a
	// receiver deduplicates on it.
	ID       string
	TenantID string
	Type     string // OutboxAudit or OutboxCall
	At       time.Time
	// Data is the event's payload-free data: the audit event, or the call
	// record's counts, sizes and hash (MC12), as JSON.
	Data json.RawMessage
	// Attempts counts the failed deliveries of this entry so far.
	Attempts int
}

// OutboxDrain is one delivery pass over a tenant's outbox.
type OutboxDrain struct {
	// Now is the pass's clock: an entry is due when its next attempt is
	// not after it.
	Now time.Time
	// Limit bounds how many entries the pass sends.
	Limit int
	// Send delivers one entry; nil means the sink accepted it.
	Send func(ctx context.Context, e OutboxEntry) error
	// RetryAt is when an entry whose attempts-th delivery failed may be
	// sent again.
	RetryAt func(attempts int) time.Time
}

// AuditOutbox is the audit stream's outbox across tenants (system scope).
type AuditOutbox interface {
	// DueTenants returns at most limit tenants whose first entry may be
	// sent at now.
	DueTenants(ctx context.Context, now time.Time, limit int) ([]string, error)
	// Drain sends the tenant's entries in order, oldest first, each only
	// after the one before it was accepted, and deletes those accepted.
	// At the first failure it stops, records the failure on that entry
	// (attempts, the next attempt at RetryAt, the error's text) and
	// returns the count sent with the failure. A pass over a tenant that
	// another pass holds sends nothing and returns 0, nil.
	Drain(ctx context.Context, tenantID string, d OutboxDrain) (int, error)
	// Backlog returns how many entries wait and the time of the oldest
	// (zero when none).
	Backlog(ctx context.Context) (int64, time.Time, error)
}

// AuditSink receives the audit stream: the operator's webhook.
type AuditSink interface {
	// Deliver sends one entry; nil only when the sink accepted it.
	Deliver(ctx context.Context, e OutboxEntry) error
}

// The outcomes of one delivery attempt (quavon_audit_deliveries_total),
// also the counts of a run: entries delivered, tenants failed.
const (
	AuditDelivered = "delivered"
	AuditFailed    = "failed"
)

// AuditOutcomes are every outcome of a delivery.
var AuditOutcomes = []string{AuditDelivered, AuditFailed}

// AuditStreamMetrics counts the stream's deliveries.
type AuditStreamMetrics interface {
	// AuditDelivery counts one delivery attempt: delivered or failed.
	AuditDelivery(outcome string)
}
