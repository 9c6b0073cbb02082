package registry

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// ActionServerRecheck is the audit action of the recheck between reviews;
// its details are counts and fixed codes only.
const ActionServerRecheck = "server.recheck"

// RecheckActor is the audit actor of the recheck: no token is behind it.
const RecheckActor = "system:recheck"

// RecheckJob lists again, between reviews, the tools of every enabled
// server with pinned tools (QUAVON_MCP_RECHECK_INTERVAL), so that a
// changed tool shows as changed before a review meets it. It marks what a
// review would ([server.Server.MarkListedChanged]) under the discovery's
// claim; it never calls a tool. The worker runs it periodically on one
// replica.
type RecheckJob struct {
	d          DiscoveryDeps
	candidates ports.RecheckCandidates
	metrics    ports.RecheckMetrics
}

// NewRecheckJob returns the job.
func NewRecheckJob(d DiscoveryDeps, candidates ports.RecheckCandidates, metrics ports.RecheckMetrics) *RecheckJob {
	return &RecheckJob{d: d, candidates: candidates, metrics: metrics}
}

// RecheckTTLFloor is the shortest wait between a server's rechecks that
// its listing's cache hint (ttlMs) may ask for.
const RecheckTTLFloor = time.Minute

// RecheckEvery is how long after its last listing a server is listed
// again: interval, or its cache hint when that is shorter, but never
// under RecheckTTLFloor. A hint of 0 is none (the protocol's default for
// an absent ttlMs must not turn every server into a minute's recheck).
func RecheckEvery(interval, hint time.Duration) time.Duration {
	if hint <= 0 {
		return interval
	}
	return min(interval, max(hint, RecheckTTLFloor))
}

// RecheckJitter is how long past interval a server's recheck waits: a
// tenth of interval at most, the same for a server every time (from its
// id), so the servers' rechecks spread over the job's runs instead of
// meeting in one.
func RecheckJitter(serverID string, interval time.Duration) time.Duration {
	spread := interval / 10
	if spread <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(serverID))
	return time.Duration(h.Sum64() % uint64(spread))
}

// RecheckServers rechecks every candidate server whose last listing is
// older than [RecheckEvery] plus its jitter (never listed: at once), tenant by
// tenant, one server at a time, and returns how many it rechecked by
// outcome (ports.RecheckOutcomes). An interval of 0 or less, or closed
// gates (sign-off, instance), recheck nothing. A failure of one server is
// its outcome, not the run's; only the candidates' query fails the run.
func (j *RecheckJob) RecheckServers(ctx context.Context, interval time.Duration) (map[string]int, error) {
	counts := map[string]int{}
	if interval <= 0 || j.d.Gates.Check() != nil {
		return counts, nil
	}
	cands, err := j.candidates.RecheckCandidates(ctx)
	if err != nil {
		return counts, err
	}
	now := j.d.Clock.Now()
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return counts, err
		}
		every := RecheckEvery(interval, c.ListTTL)
		if !c.LastDiscoveryAt.IsZero() && now.Sub(c.LastDiscoveryAt) < every+RecheckJitter(c.ServerID, every) {
			continue
		}
		outcome := j.recheck(ctx, c)
		if outcome == "" {
			continue
		}
		counts[outcome]++
		j.metrics.McpRecheck(outcome)
	}
	return counts, nil
}

// recheck lists one server's tools again: it reads the server (skipped,
// "" returned, when it is no longer enabled, acknowledged, inside the
// operator's allowlist or with a pinned tool: nothing is contacted),
// takes the discovery claim (throttled when another listing holds it),
// connects with the discovery cap, lists the tools and marks them as a
// review would; a server that refused the credential gets
// server_unauthorized as a review records it. Audited either way.
func (j *RecheckJob) recheck(ctx context.Context, c ports.RecheckCandidate) string {
	var s *server.Server
	err := j.d.Tenants.InTenant(ctx, c.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		s, err = tx.Servers().Get(ctx, c.ServerID)
		return err
	})
	if errors.Is(err, ports.ErrNotFound) {
		return ""
	}
	if err != nil {
		return ports.RecheckFailed
	}
	if !s.Enabled() || !s.Acknowledged() || len(s.Tools()) == 0 || !j.d.Allowed.Allows(s.URL()) {
		return ""
	}
	if err := j.d.claimDiscovery(ctx, c.TenantID, c.ServerID, ports.ListingDiscovery); err != nil {
		var ae *app.Error
		if errors.As(err, &ae) && ae.Code == app.CodeDiscoveryThrottled {
			return ports.RecheckThrottled
		}
		return ports.RecheckFailed
	}
	_, target, err := j.d.target(ctx, c.TenantID, c.ServerID)
	if err != nil {
		return ports.RecheckFailed
	}
	var ttl time.Duration
	listed, err := func() ([]ports.ListedTool, error) {
		sess, err := j.d.Connector.Open(ctx, target, limits.DiscoveryResponseCap)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		listed, err := sess.ListTools(ctx)
		ttl = sess.ListTTL()
		return listed, err
	}()
	if err != nil {
		_, code := app.RemoteFailure(err)
		_ = j.recordFailure(ctx, c, code, errors.Is(err, ports.ErrServerUnauthorized))
		return ports.RecheckFailed
	}
	marked, err := j.recordListing(ctx, c, liveTools(listed), ttl)
	switch {
	case err != nil:
		return ports.RecheckFailed
	case marked > 0:
		return ports.RecheckChanged
	default:
		return ports.RecheckUnchanged
	}
}

// recordListing marks the server's changed tools, when the listing shows
// any, and audits the recheck with its counts; a server with nothing to
// mark is not written. It keeps the listing's cache hint. It returns how
// many tools are marked changed.
func (j *RecheckJob) recordListing(ctx context.Context, c ports.RecheckCandidate, live []server.LiveTool, ttl time.Duration) (int, error) {
	var marked []string
	err := j.d.Tenants.InTenant(ctx, c.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		s, err := tx.Servers().Get(ctx, c.ServerID)
		if err != nil {
			return err
		}
		if ttl != c.ListTTL {
			if err := tx.Servers().RecordListTTL(ctx, c.ServerID, ttl); err != nil {
				return err
			}
		}
		newly := 0
		if len(s.MarkListedChanged(live)) > 0 { // on the copy read: does the stored server need a write?
			_, err := tx.Servers().Update(ctx, c.ServerID, func(s *server.Server) (ports.CredentialUpdate, error) {
				before := s.ChangedTools()
				marked = s.MarkListedChanged(live)
				for _, name := range marked {
					if !slices.Contains(before, name) {
						newly++
					}
				}
				return ports.CredentialUpdate{}, nil
			})
			if err != nil {
				return err
			}
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionServerRecheck, Actor: RecheckActor, Target: c.ServerID, At: j.d.Clock.Now(),
			Details: map[string]any{"tools": len(live), "changed": len(marked), "newlyChanged": newly},
		})
	})
	return len(marked), err
}

// recordFailure audits a recheck whose listing failed, with the fixed
// code; a server that refused the credential gets server_unauthorized as
// its lastError, as a review records it.
func (j *RecheckJob) recordFailure(ctx context.Context, c ports.RecheckCandidate, code string, unauthorized bool) error {
	return j.d.Tenants.InTenant(ctx, c.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if unauthorized {
			_, err := tx.Servers().Update(ctx, c.ServerID, func(s *server.Server) (ports.CredentialUpdate, error) {
				s.RecordError(code)
				return ports.CredentialUpdate{}, nil
			})
			if err != nil {
				return err
			}
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionServerRecheck, Actor: RecheckActor, Target: c.ServerID, At: j.d.Clock.Now(),
			Details: map[string]any{"error": code},
		})
	})
}
