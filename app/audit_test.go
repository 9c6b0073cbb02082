package app_test

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

func TestAuditRecent(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	repos := app.NewRepositoryHandler(e.tenants, e.clock)
	for _, name := range []string{"a/1", "a/2", "a/3"} {
		if _, err := repos.Create(ctx, e.p, app.CreateRepository{Name: name, Visibility: "private"}); err != nil {
			t.Fatal(err)
		}
	}
	h := app.NewAuditHandler(e.tenants)
	events, err := h.Recent(ctx, e.p, 2)
	if err != nil || len(events) != 2 || events[0].Details["name"] != "a/3" {
		t.Fatalf("Recent(2) = %+v, %v; want the two newest", events, err)
	}
	if events, _ := h.Recent(ctx, e.other, app.MaxAuditLimit); len(events) != 0 {
		t.Errorf("another tenant sees %d events", len(events))
	}
	for _, limit := range []int{0, -1, app.MaxAuditLimit + 1} {
		_, err := h.Recent(ctx, e.p, limit)
		if restCode(err) != app.CodeValidationFailed || app.AsError(err).Fields["limit"] == "" {
			t.Errorf("Recent(%d) = %v, want validation_failed on limit", limit, err)
		}
	}
}

func TestStatus(t *testing.T) {
	for _, g := range append(closedGates, struct {
		name  string
		gates app.Gates
		want  app.Code
	}{"open", openGates, ""}) {
		s := app.NewStatusHandler(g.gates).Handle(context.Background(), ports.Principal{})
		if s.SignedOff != g.gates.SignedOff || s.Instance.Allowed() != g.gates.Instance.Allowed() ||
			s.Instance.String() == "" || s.Edition.String() == "" {
			t.Errorf("%s: Status = %+v", g.name, s)
		}
	}
}
