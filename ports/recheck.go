package ports

import (
	"context"
	"time"
)

// RecheckCandidate is a server the recheck between reviews may list again:
// enabled, with at least one pinned tool, in any tenant.
type RecheckCandidate struct {
	TenantID string
	ServerID string
	// LastDiscoveryAt is the server's last discovery claim (zero: never).
	LastDiscoveryAt time.Time
	// ListTTL is the cache hint of its last listing (0: none).
	ListTTL time.Duration
}

// RecheckCandidates lists, across every tenant, the servers the recheck
// between reviews lists again. Safe for concurrent use.
type RecheckCandidates interface {
	// RecheckCandidates returns every enabled server with at least one
	// pinned tool, of every tenant, ordered by tenant and id.
	RecheckCandidates(ctx context.Context) ([]RecheckCandidate, error)
}

// The outcomes of one server's recheck (quavon_mcp_rechecks_total).
const (
	// RecheckUnchanged: listed, no pinned tool changed.
	RecheckUnchanged = "unchanged"
	// RecheckChanged: listed, at least one pinned tool marked changed.
	RecheckChanged = "changed"
	// RecheckFailed: the server could not be read, claimed or listed.
	RecheckFailed = "failed"
	// RecheckThrottled: another listing holds the discovery claim.
	RecheckThrottled = "throttled"
)

// RecheckOutcomes are every outcome of a recheck.
var RecheckOutcomes = []string{RecheckUnchanged, RecheckChanged, RecheckFailed, RecheckThrottled}

// RecheckMetrics counts the servers the recheck listed.
type RecheckMetrics interface {
	// McpRecheck counts one server's recheck by outcome.
	McpRecheck(outcome string)
}
