package worker

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LeaseMarker is the job metadata key an attempt holding its lease sets.
const LeaseMarker = leaseMarker

// WithLeaseTimings returns o with the lease check's interval and grace.
func (o Options) WithLeaseTimings(check, grace time.Duration) Options {
	o.leaseCheckInterval, o.leaseGrace = check, grace
	return o
}

// TakeLease takes the lease of reviewID on conn, as an attempt does; false
// when another session holds it.
func TakeLease(ctx context.Context, conn *pgx.Conn, reviewID string) (bool, error) {
	var got bool
	err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+leaseKey+")", reviewID).Scan(&got)
	return got, err
}

// LeaseHolderSQL selects the backend pid holding the lease of the review
// id $1 in the current database (no row when none does).
const LeaseHolderSQL = `SELECT pid FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
	  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	  AND ((classid::bigint << 32) | objid::bigint) = ` + leaseKey

// LeaseParams are the lease connection's session settings.
var LeaseParams = leaseParams

// OpenLease opens a connection to the pool's database as an attempt opens
// its lease's, for the test of its settings.
func OpenLease(ctx context.Context, pool *pgxpool.Pool) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, newLeases(pool).config.Copy())
}

// PeriodicJobs are the kinds and periods of the periodic jobs o schedules.
func (o Options) PeriodicJobs() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, p := range o.periodics() {
		out[p.args.Kind()] = p.every
	}
	return out
}
