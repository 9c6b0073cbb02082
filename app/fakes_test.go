package app_test

import (
	"context"
	"sync"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// fakeTenants is an in-memory ports.Tenants: one fakeTx per tenant. It
// serialises transactions (like the row lock the real store takes) and
// does not roll back; use-case tests that need atomicity use PostgreSQL.
type fakeTenants struct {
	mu  sync.Mutex
	txs map[string]*fakeTx
	// newTx builds the repos of a tenant seen for the first time.
	newTx func(tenantID string) *fakeTx
}

type fakeTx struct {
	servers  ports.ServerRepo
	repos    ports.RepositoryRepo
	policies ports.PolicyRepo
	audit    *fakeAudit
	calls    *fakeCalls
	reviews  ports.ReviewRepo
	settings *fakeSettings
	prompts  *fakePromptLogs
}

func (t *fakeTx) Servers() ports.ServerRepo          { return t.servers }
func (t *fakeTx) Repositories() ports.RepositoryRepo { return t.repos }
func (t *fakeTx) Policies() ports.PolicyRepo         { return t.policies }
func (t *fakeTx) Audit() ports.AuditLog              { return t.audit }
func (t *fakeTx) Calls() ports.CallLog               { return t.calls }
func (t *fakeTx) Reviews() ports.ReviewRepo          { return t.reviews }
func (t *fakeTx) Settings() ports.SettingsRepo       { return t.settings }
func (t *fakeTx) PromptLogs() ports.PromptLogRepo    { return t.prompts }

func (f *fakeTenants) InTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.txs == nil {
		f.txs = map[string]*fakeTx{}
	}
	tx, ok := f.txs[tenantID]
	if !ok {
		tx = f.newTx(tenantID)
		if tx.audit == nil {
			tx.audit = &fakeAudit{}
		}
		if tx.calls == nil {
			tx.calls = &fakeCalls{}
		}
		if tx.settings == nil {
			tx.settings = &fakeSettings{s: settings.Default()}
		}
		if tx.prompts == nil {
			tx.prompts = &fakePromptLogs{}
		}
		f.txs[tenantID] = tx
	}
	return fn(ctx, tx)
}

// fakeAudit records events in memory.
type fakeAudit struct{ events []ports.AuditEvent }

func (a *fakeAudit) Append(_ context.Context, e ports.AuditEvent) error {
	a.events = append(a.events, e)
	return nil
}

func (a *fakeAudit) Recent(_ context.Context, limit int) ([]ports.AuditEvent, error) {
	var out []ports.AuditEvent
	for i := len(a.events) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, a.events[i])
	}
	return out, nil
}

// fakeSettings holds one tenant's settings.
type fakeSettings struct{ s settings.Settings }

func (f *fakeSettings) Get(context.Context) (settings.Settings, error) { return f.s, nil }
func (f *fakeSettings) Put(_ context.Context, s settings.Settings) error {
	f.s = s
	return nil
}

// fakePromptLogs keeps one tenant's prompt logs in memory.
type fakePromptLogs struct{ logs []ports.PromptLog }

func (f *fakePromptLogs) Insert(_ context.Context, l ports.PromptLog) error {
	f.logs = append(f.logs, l)
	return nil
}

func (f *fakePromptLogs) List(_ context.Context, reviewID string, now time.Time) ([]ports.PromptLog, error) {
	var out []ports.PromptLog
	for _, l := range f.logs {
		if l.ReviewID == reviewID && l.ExpiresAt.After(now) {
			out = append(out, l)
		}
	}
	return out, nil
}

func (f *fakePromptLogs) DeleteAll(context.Context) (int64, error) {
	n := int64(len(f.logs))
	f.logs = nil
	return n, nil
}

// fixedClock is a ports.Clock that tests move by hand.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// fakeCalls records tool calls in memory.
type fakeCalls struct{ calls []ports.ToolCall }

func (c *fakeCalls) Record(_ context.Context, call ports.ToolCall) error {
	c.calls = append(c.calls, call)
	return nil
}

func (c *fakeCalls) Recent(_ context.Context, serverID string, limit int) ([]ports.ToolCall, error) {
	var out []ports.ToolCall
	for i := len(c.calls) - 1; i >= 0 && len(out) < limit; i-- {
		if c.calls[i].ServerID == serverID {
			out = append(out, c.calls[i])
		}
	}
	return out, nil
}

func (c *fakeCalls) ForReview(_ context.Context, reviewID string, limit int) ([]ports.ToolCall, error) {
	var out []ports.ToolCall
	for _, r := range c.calls {
		if r.ReviewID == reviewID && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

func (c *fakeCalls) ReviewUsage(_ context.Context, reviewID string) (ports.ReviewUsage, error) {
	var u ports.ReviewUsage
	for _, r := range c.calls {
		if r.ReviewID != reviewID {
			continue
		}
		if r.Status != "budget_exhausted" && r.ArgumentsHash != "" {
			u.Reserved++
		}
		switch r.Status {
		case "ok", "error":
			u.Sent++
			u.Bytes += min(r.ResponseBytes, limits.CallReservation)
		case "too_large":
			u.Sent++
			u.Bytes += limits.CallReservation
		case "unavailable":
			u.Sent++
		case "blocked":
			u.Blocked++
		}
	}
	return u, nil
}
