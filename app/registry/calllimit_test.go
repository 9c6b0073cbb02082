package registry_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

// A server's calls-per-minute limit in the registration use cases: null
// or 1 to 600, at most the instance's cap (QUAVON_MCP_MAX_CALLS_PER_MINUTE);
// what is refused is validation_failed on maxCallsPerMinute, with nothing
// stored.

func callCap(t *testing.T, n int) server.CallCap {
	t.Helper()
	c, err := server.ParseCallCap(n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func perMinute(s *server.Server) string {
	if n, ok := s.MaxCallsPerMinute().PerMinute(); ok {
		return fmt.Sprint(n)
	}
	return "none"
}

func wantCallLimitRefused(t *testing.T, err error) {
	t.Helper()
	e := srvWantCode(t, err, app.CodeValidationFailed)
	if len(e.Fields) != 1 || e.Fields["maxCallsPerMinute"] == "" {
		t.Errorf("fields %v, want maxCallsPerMinute only", e.Fields)
	}
}

func TestCreateServerCallLimit(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cap     int // 0: the default, 600
		limit   *int
		want    string
		refused bool
	}{
		{name: "none", want: "none"},
		{name: "one", limit: srvPtr(1), want: "1"},
		{name: "the most under the default cap", limit: srvPtr(600), want: "600"},
		{name: "at the cap", cap: 30, limit: srvPtr(30), want: "30"},
		{name: "above the cap", cap: 30, limit: srvPtr(31), refused: true},
		{name: "the most above a lower cap", cap: 30, limit: srvPtr(600), refused: true},
		{name: "zero", limit: srvPtr(0), refused: true},
		{name: "negative", limit: srvPtr(-1), refused: true},
		{name: "above the most", limit: srvPtr(601), refused: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			if tt.cap != 0 {
				e.deps.CallCap = callCap(t, tt.cap)
			}
			cmd := srvNoneCmd("wiki", "https://wiki.example.com/mcp")
			cmd.MaxCallsPerMinute = tt.limit
			s, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, cmd)
			if tt.refused {
				wantCallLimitRefused(t, err)
				if r := e.repos[srvTenantA]; r != nil && len(r.Rows) != 0 {
					t.Errorf("stored %d servers", len(r.Rows))
				}
				if len(e.resolver.Lookups) != 0 || len(e.audit(srvTenantA)) != 0 {
					t.Errorf("looked up %v, audited %d events: want nothing", e.resolver.Lookups, len(e.audit(srvTenantA)))
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateServer() = %v", err)
			}
			if got := perMinute(s); got != tt.want {
				t.Errorf("limit %s, want %s", got, tt.want)
			}
			if got := perMinute(e.repos[srvTenantA].Rows[s.ID()]); got != tt.want {
				t.Errorf("stored limit %s, want %s", got, tt.want)
			}
			if !s.UpdatedAt().Equal(s.CreatedAt()) {
				t.Errorf("updatedAt %v, createdAt %v", s.UpdatedAt(), s.CreatedAt())
			}
			details := e.audit(srvTenantA)[0].Details
			if got, ok := details["maxCallsPerMinute"]; ok != (tt.want != "none") || ok && fmt.Sprint(got) != tt.want {
				t.Errorf("audit details %v, want the limit %s", details, tt.want)
			}
		})
	}
	// Every field at once: the limit's refusal joins the others.
	e := newServerEnv(t)
	cmd := srvNoneCmd("Bad Name!", "https://wiki.example.com/mcp")
	cmd.MaxCallsPerMinute = srvPtr(0)
	_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, cmd)
	if f := srvWantCode(t, err, app.CodeValidationFailed).Fields; f["maxCallsPerMinute"] == "" || f["name"] == "" {
		t.Errorf("fields %v, want name and maxCallsPerMinute", f)
	}
}

func TestPatchServerCallLimit(t *testing.T) {
	e := newServerEnv(t)
	e.deps.CallCap = callCap(t, 50)
	s := e.create(t, srvPrincipalA, srvNoneCmd("wiki", "https://wiki.example.com/mcp"))
	patch := func(limit *int) (*server.Server, error) {
		return registry.NewPatchServerHandler(e.deps).Handle(context.Background(), srvPrincipalA,
			registry.PatchServer{ID: s.ID(), MaxCallsPerMinute: &registry.CallLimitChange{PerMinute: limit}})
	}
	steps := []struct {
		limit   *int
		want    string // the stored limit after the step
		refused bool
		audited bool
	}{
		{limit: srvPtr(50), want: "50", audited: true},
		{limit: srvPtr(50), want: "50"}, // no change, no event
		{limit: srvPtr(51), want: "50", refused: true},
		{limit: srvPtr(0), want: "50", refused: true},
		{limit: srvPtr(601), want: "50", refused: true},
		{limit: srvPtr(7), want: "7", audited: true},
		{limit: nil, want: "none", audited: true}, // null removes the limit
		{limit: nil, want: "none"},
	}
	for i, st := range steps {
		before := len(e.audit(srvTenantA))
		got, err := patch(st.limit)
		if st.refused {
			wantCallLimitRefused(t, err)
		} else if err != nil {
			t.Fatalf("step %d: PatchServer() = %v", i, err)
		} else if perMinute(got) != st.want {
			t.Errorf("step %d: answered limit %s, want %s", i, perMinute(got), st.want)
		}
		if stored := perMinute(e.repos[srvTenantA].Rows[s.ID()]); stored != st.want {
			t.Errorf("step %d: stored limit %s, want %s", i, stored, st.want)
		}
		events := e.audit(srvTenantA)[before:]
		if st.audited != (len(events) == 1) || len(events) > 1 ||
			st.audited && fmt.Sprint(events[0].Details) != fmt.Sprint(map[string]any{"changed": []string{"maxCallsPerMinute"}}) {
			t.Errorf("step %d: audit %+v, want an event %v", i, events, st.audited)
		}
	}
	// A stored limit above a cap lowered later stays stored (a call is
	// held to the cap); the server can still be patched otherwise.
	if _, err := patch(srvPtr(40)); err != nil {
		t.Fatal(err)
	}
	e.deps.CallCap = callCap(t, 10)
	got, err := registry.NewPatchServerHandler(e.deps).Handle(context.Background(), srvPrincipalA,
		registry.PatchServer{ID: s.ID(), Enabled: srvPtr(false)})
	if err != nil || perMinute(got) != "40" {
		t.Errorf("patch under a lower cap = %v, limit %v", err, got)
	}
}
