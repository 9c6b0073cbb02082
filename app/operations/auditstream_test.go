package operations_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/domain/auditstream"
	"github.com/codelotse/codelotse/ports"
)

// fakeOutbox holds entries per tenant and drains them as the port says.
type fakeOutbox struct {
	entries  map[string][]ports.OutboxEntry
	nextAt   map[string]time.Time
	drains   []string
	dueErr   error
	drainErr error
}

func (o *fakeOutbox) DueTenants(_ context.Context, now time.Time, limit int) ([]string, error) {
	if o.dueErr != nil {
		return nil, o.dueErr
	}
	var out []string
	for t, es := range o.entries {
		if len(es) > 0 && !o.nextAt[t].After(now) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), limit)], nil
}

func (o *fakeOutbox) Drain(ctx context.Context, tenant string, d ports.OutboxDrain) (int, error) {
	o.drains = append(o.drains, tenant)
	if o.drainErr != nil {
		return 0, o.drainErr
	}
	sent := 0
	for sent < d.Limit && len(o.entries[tenant]) > 0 {
		e := o.entries[tenant][0]
		if err := d.Send(ctx, e); err != nil {
			o.entries[tenant][0].Attempts++
			o.nextAt[tenant] = d.RetryAt(o.entries[tenant][0].Attempts)
			return sent, err
		}
		o.entries[tenant] = o.entries[tenant][1:]
		sent++
	}
	return sent, nil
}

func (o *fakeOutbox) Backlog(context.Context) (int64, time.Time, error) { return 0, time.Time{}, nil }

// fakeSink accepts every entry except those of the refused tenants.
type fakeSink struct {
	got     []string
	refused map[string]error
}

func (s *fakeSink) Deliver(_ context.Context, e ports.OutboxEntry) error {
	if err := s.refused[e.TenantID]; err != nil {
		return err
	}
	s.got = append(s.got, e.ID)
	return nil
}

type deliveryCounts map[string]int

func (c deliveryCounts) AuditDelivery(outcome string) { c[outcome]++ }

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func entries(tenant string, n int) []ports.OutboxEntry {
	out := make([]ports.OutboxEntry, n)
	for i := range out {
		out[i] = ports.OutboxEntry{Seq: int64(i + 1), ID: fmt.Sprintf("%s-%03d", tenant, i), TenantID: tenant, Type: ports.OutboxAudit}
	}
	return out
}

// TestAuditStreamDeliversEveryTenantInOrder: a run drains each due
// tenant batch after batch until its outbox is empty; a tenant the sink
// refuses is counted, warned about (tenant and reason, never the URL)
// and waits for its backoff, delaying no other tenant.
func TestAuditStreamDeliversEveryTenantInOrder(t *testing.T) {
	now := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	outbox := &fakeOutbox{
		entries: map[string][]ports.OutboxEntry{"a": entries("a", operations.AuditStreamBatch*2+5), "b": entries("b", 3), "c": entries("c", 2)},
		nextAt:  map[string]time.Time{},
	}
	refusal := errors.New("audit webhook: answered 503")
	sink := &fakeSink{refused: map[string]error{"b": refusal}}
	metrics := deliveryCounts{}
	var warnings []map[string]string
	warn := func(_ string, fields map[string]string) { warnings = append(warnings, fields) }
	job := operations.NewAuditStreamJob(outbox, sink, metrics, fixedClock{now}, warn)

	counts, err := job.Deliver(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := operations.AuditStreamBatch*2 + 5 + 2
	if counts[ports.AuditDelivered] != want || counts[ports.AuditFailed] != 1 {
		t.Errorf("counts %v, want %d delivered and 1 tenant failed", counts, want)
	}
	if metrics[ports.AuditDelivered] != want || metrics[ports.AuditFailed] != 1 {
		t.Errorf("metrics %v", metrics)
	}
	if !slices.IsSorted(sink.got[:len(sink.got)-2]) || sink.got[0] != "a-000" || sink.got[len(sink.got)-1] != "c-001" {
		t.Errorf("delivered out of order: %v…%v", sink.got[:3], sink.got[len(sink.got)-3:])
	}
	if len(warnings) != 1 || warnings[0]["tenantId"] != "b" || warnings[0]["reason"] != refusal.Error() {
		t.Errorf("warnings %v", warnings)
	}
	if got := outbox.nextAt["b"]; !got.Equal(now.Add(auditstream.RetryDelay(1))) {
		t.Errorf("b's next attempt at %v, want the first backoff after now", got)
	}
	if strings.Join(outbox.drains, ",") != "a,a,a,b,c" {
		t.Errorf("drains %v: want a until a short batch, b once, c once", outbox.drains)
	}

	// The next run, before b's next attempt, has nothing to do.
	outbox.drains = nil
	if counts, err := job.Deliver(t.Context()); err != nil || counts[ports.AuditDelivered] != 0 || outbox.drains != nil {
		t.Errorf("second run = %v, %v, drains %v", counts, err, outbox.drains)
	}
}

// TestAuditStreamStopsAtADatabaseError: an error of the outbox itself
// (not of the sink) ends the run with the error.
func TestAuditStreamStopsAtADatabaseError(t *testing.T) {
	down := errors.New("database down")
	for name, outbox := range map[string]*fakeOutbox{
		"due":   {dueErr: down},
		"drain": {entries: map[string][]ports.OutboxEntry{"a": entries("a", 1), "b": entries("b", 1)}, nextAt: map[string]time.Time{}, drainErr: down},
	} {
		job := operations.NewAuditStreamJob(outbox, &fakeSink{}, deliveryCounts{}, fixedClock{time.Now()}, func(string, map[string]string) {
			t.Errorf("%s: a database error was warned about as a delivery failure", name)
		})
		if _, err := job.Deliver(t.Context()); !errors.Is(err, down) {
			t.Errorf("%s: Deliver = %v, want the database error", name, err)
		}
		if len(outbox.drains) > 1 {
			t.Errorf("%s: drained %v after the error", name, outbox.drains)
		}
	}
}

// TestAuditStreamRunIsBounded: one run sends at most
// AuditStreamMaxPerRun; the rest waits for the next run.
func TestAuditStreamRunIsBounded(t *testing.T) {
	outbox := &fakeOutbox{entries: map[string][]ports.OutboxEntry{"a": entries("a", operations.AuditStreamMaxPerRun+operations.AuditStreamBatch+1)}, nextAt: map[string]time.Time{}}
	job := operations.NewAuditStreamJob(outbox, &fakeSink{}, deliveryCounts{}, fixedClock{time.Now()}, func(string, map[string]string) {})
	counts, err := job.Deliver(t.Context())
	if err != nil || counts[ports.AuditDelivered] != operations.AuditStreamMaxPerRun {
		t.Errorf("first run = %v, %v; want %d", counts, err, operations.AuditStreamMaxPerRun)
	}
	counts, err = job.Deliver(t.Context())
	if err != nil || counts[ports.AuditDelivered] != operations.AuditStreamBatch+1 {
		t.Errorf("second run = %v, %v; want the rest", counts, err)
	}
}
