package ports

import (
	"context"
	"time"

	"github.com/codelotse/codelotse/domain/settings"
)

// SettingsRepo reads and writes the settings of the transaction's tenant.
type SettingsRepo interface {
	// Get returns the settings and holds a share lock on them until the
	// transaction ends: a concurrent Put waits, so what the caller decides
	// on them (write a prompt log or not) cannot race a change.
	Get(ctx context.Context) (settings.Settings, error)
	// GetForUpdate returns the settings and holds the lock of a change on
	// them until the transaction ends: a concurrent GetForUpdate (or Get)
	// waits, so a read-then-Put of one transaction never interleaves with
	// another's. A change reads with it, never with Get: two transactions
	// that hold share locks and then both Put deadlock.
	GetForUpdate(ctx context.Context) (settings.Settings, error)
	// Put stores the settings.
	Put(ctx context.Context, s settings.Settings) error
}

// PromptLog is one model request of a review as the debug prompt log
// keeps it: the step, the step's turn (from 1), and the messages sealed by
// the [Cipher] under the associated data "prompt_logs:<review id>".
type PromptLog struct {
	ReviewID  string
	Step      string
	Turn      int
	Sealed    []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// PromptLogRepo stores the tenant's debug prompt logs.
type PromptLogRepo interface {
	Insert(ctx context.Context, l PromptLog) error
	// List returns the logs of a review that expire after now, in the
	// order they were written.
	List(ctx context.Context, reviewID string, now time.Time) ([]PromptLog, error)
	// DeleteAll deletes every prompt log of the tenant and counts them.
	DeleteAll(ctx context.Context) (int64, error)
}

// SealedPromptLog is one stored prompt log, for key rotation.
type SealedPromptLog struct {
	ID       string
	ReviewID string
	Sealed   []byte
}

// PromptLogRotator pages through the prompt logs of every tenant and
// rewrites them, like [CredentialRotator]. Used by `codelotse keys
// rotate` only.
type PromptLogRotator interface {
	// Batch returns up to limit logs with ID > after, in id order.
	Batch(ctx context.Context, after string, limit int) ([]SealedPromptLog, error)
	// Replace writes a re-sealed log only if the stored one is still old
	// (compare-and-swap); it reports whether it wrote.
	Replace(ctx context.Context, id string, old, sealed []byte) (bool, error)
}

// Tables the retention job deletes from, in the order it deletes.
const (
	RetainPromptLogs = "prompt_logs"
	RetainToolCalls  = "mcp_tool_calls"
	RetainAuditLog   = "audit_events"
	RetainReviews    = "review_runs"
	RetainOutbox     = "audit_outbox"
)

// RetainedTables lists the retention job's tables in order: a review run
// goes last, after the records that point at it.
var RetainedTables = []string{RetainPromptLogs, RetainToolCalls, RetainAuditLog, RetainOutbox, RetainReviews}

// Retention deletes expired rows across every tenant. Safe for concurrent
// use; a row is deleted once.
type Retention interface {
	// DeleteExpired deletes at most limit rows of table (one of
	// [RetainedTables]) that are expired at now: older than their tenant's
	// retention, and for prompt logs also past their TTL. A review run
	// that is queued or running is never expired. The batch is one short
	// transaction that skips rows locked by others.
	//
	// Rows expired by their tenant's retention are deleted in the order
	// (tenant, time), from after on (the zero cursor is the beginning);
	// next is the position of the last one deleted, where the run's next
	// batch of the table goes on, so that no batch reads again what the
	// ones before it deleted. A run starts each table at the zero cursor;
	// a row skipped because it was locked is deleted by the next run.
	DeleteExpired(ctx context.Context, table string, now time.Time, after RetentionCursor, limit int) (deleted int64, next RetentionCursor, err error)
}

// RetentionCursor is how far a retention run's batches of one table have
// got: the tenant and the time of the last row deleted. The zero value is
// the beginning.
type RetentionCursor struct {
	TenantID string
	At       time.Time
}

// RetentionMetrics counts the rows the retention job deleted.
type RetentionMetrics interface {
	// RetentionDeleted adds rows deleted from table by one run.
	RetentionDeleted(table string, rows int64)
}
