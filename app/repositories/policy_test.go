package repositories_test

import (
	"context"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports/portfake"
)

// closedGates are the gate settings every MCP write must refuse.
var closedGates = []struct {
	name  string
	gates app.Gates
	want  app.Code
}{
	{"not signed off", app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}, app.CodeNotSignedOff},
	{"not signed off and disabled", app.Gates{SignedOff: false, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}, app.CodeNotSignedOff},
	{"instance disabled", app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.Enterprise}, app.CodeInstanceDisabled},
	{"instance unset", app.Gates{SignedOff: true}, app.CodeInstanceDisabled},
}

func TestPutPolicyGates(t *testing.T) {
	inputs := map[string]repositories.McpInput{
		"on":      {Mode: "on", Servers: []string{serverA1}},
		"off":     {Mode: "off"},
		"inherit": {Mode: "inherit"},
		"invalid": {Mode: "sometimes", MaxCalls: intPtr(0)},
	}
	for _, g := range closedGates {
		for name, in := range inputs {
			t.Run(g.name+"/"+name, func(t *testing.T) {
				e := newRestEnv(t)
				d := e.deps(g.gates)
				_, err := repositories.NewPutPolicyHandler(d).Handle(context.Background(), e.p, repositories.PutPolicy{RepositoryID: repoPrivate, Mcp: in})
				if restCode(err) != g.want {
					t.Fatalf("Put = %v, want %s", err, g.want)
				}
				if len(e.audit(tenantA)) != 0 || len(e.policies[tenantA].Repos) != 0 {
					t.Error("a refused PUT changed something")
				}
			})
		}
	}
}

func TestPutDefaultsGates(t *testing.T) {
	for _, g := range closedGates {
		for _, mode := range []string{"on", "off"} {
			t.Run(g.name+"/"+mode, func(t *testing.T) {
				e := newRestEnv(t)
				d := e.deps(g.gates)
				_, err := repositories.NewPutDefaultsHandler(d).Handle(context.Background(), e.p, repositories.PutDefaults{Mcp: repositories.McpInput{Mode: mode, Servers: []string{serverA1}}})
				if restCode(err) != g.want {
					t.Fatalf("Put = %v, want %s", err, g.want)
				}
				if len(e.audit(tenantA)) != 0 || e.policies[tenantA].Def != nil {
					t.Error("a refused PUT changed something")
				}
			})
		}
	}
}

func TestPutPolicyFields(t *testing.T) {
	six := []string{serverA1, serverA2, portfake.UUID(3), portfake.UUID(4), portfake.UUID(5), portfake.UUID(6)}
	tests := []struct {
		name   string
		repo   string
		in     repositories.McpInput
		want   app.Code
		fields []string
	}{
		{name: "maxCalls 0", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1}, MaxCalls: intPtr(0)}, want: app.CodeValidationFailed, fields: []string{"mcp.maxCalls"}},
		{name: "maxCalls 21", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1}, MaxCalls: intPtr(21)}, want: app.CodeValidationFailed, fields: []string{"mcp.maxCalls"}},
		{name: "maxCalls negative", repo: repoPrivate, in: repositories.McpInput{Mode: "off", MaxCalls: intPtr(-1)}, want: app.CodeValidationFailed, fields: []string{"mcp.maxCalls"}},
		{name: "six servers", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: six}, want: app.CodeValidationFailed, fields: []string{"mcp.servers"}},
		{name: "duplicate server", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1, strings.ToUpper(serverA1)}}, want: app.CodeValidationFailed, fields: []string{"mcp.servers"}},
		{name: "bad mode", repo: repoPrivate, in: repositories.McpInput{Mode: "ON"}, want: app.CodeValidationFailed, fields: []string{"mcp.mode"}},
		{name: "no mode", repo: repoPrivate, in: repositories.McpInput{}, want: app.CodeValidationFailed, fields: []string{"mcp.mode"}},
		{name: "all bad", repo: repoPrivate, in: repositories.McpInput{Mode: "x", Servers: six, MaxCalls: intPtr(99)}, want: app.CodeValidationFailed, fields: []string{"mcp.maxCalls", "mcp.mode", "mcp.servers"}},
		{name: "another tenant's server", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1, serverB1}}, want: app.CodeUnknownServer},
		{name: "no such server", repo: repoPrivate, in: repositories.McpInput{Mode: "off", Servers: []string{portfake.UUID(77)}}, want: app.CodeUnknownServer},
		{name: "malformed server id", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1, "' OR 1=1 --"}}, want: app.CodeUnknownServer},
		{name: "public on", repo: repoPublic, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1}}, want: app.CodePublicRepository},
		{name: "unknown repository", repo: portfake.UUID(42), in: repositories.McpInput{Mode: "off"}, want: app.CodeNotFound},
		{name: "malformed repository", repo: "../../etc", in: repositories.McpInput{Mode: "off"}, want: app.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRestEnv(t)
			d := e.deps(openGates)
			_, err := repositories.NewPutPolicyHandler(d).Handle(context.Background(), e.p, repositories.PutPolicy{RepositoryID: tt.repo, Mcp: tt.in})
			if restCode(err) != tt.want {
				t.Fatalf("Put = %v, want %s", err, tt.want)
			}
			var got []string
			for f := range app.AsError(err).Fields {
				got = append(got, f)
			}
			if len(got) != len(tt.fields) {
				t.Errorf("fields = %v, want %v", app.AsError(err).Fields, tt.fields)
			}
			for _, f := range tt.fields {
				if _, ok := app.AsError(err).Fields[f]; !ok {
					t.Errorf("fields = %v, want %s", app.AsError(err).Fields, f)
				}
			}
			if len(e.audit(tenantA)) != 0 || len(e.policies[tenantA].Repos) != 0 {
				t.Error("a refused PUT changed something")
			}
		})
	}
}

func TestPutPolicyStoresAndAudits(t *testing.T) {
	tests := []struct {
		name   string
		repo   string
		in     repositories.McpInput
		mode   string
		calls  int
		active bool
	}{
		{name: "on private", repo: repoPrivate, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1, strings.ToUpper(serverA2)}, MaxCalls: intPtr(20)}, mode: "on", calls: 20, active: true},
		{name: "on internal, default calls", repo: repoIntern, in: repositories.McpInput{Mode: "on", Servers: []string{serverA1}}, mode: "on", calls: 5, active: true},
		{name: "on without servers", repo: repoPrivate, in: repositories.McpInput{Mode: "on", MaxCalls: intPtr(1)}, mode: "on", calls: 1, active: false},
		{name: "off public", repo: repoPublic, in: repositories.McpInput{Mode: "off", Servers: []string{serverA1}}, mode: "off", calls: 5},
		{name: "inherit public", repo: repoPublic, in: repositories.McpInput{Mode: "inherit"}, mode: "inherit", calls: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRestEnv(t)
			d := e.deps(openGates)
			v, err := repositories.NewPutPolicyHandler(d).Handle(context.Background(), e.p, repositories.PutPolicy{RepositoryID: tt.repo, Mcp: tt.in})
			if err != nil {
				t.Fatal(err)
			}
			if v.Stored.Mode().String() != tt.mode || v.Stored.MaxCalls() != tt.calls || v.McpActive != tt.active {
				t.Errorf("Put = mode %s, maxCalls %d, active %v; want %s, %d, %v",
					v.Stored.Mode(), v.Stored.MaxCalls(), v.McpActive, tt.mode, tt.calls, tt.active)
			}
			stored, ok := e.policies[tenantA].Repos[tt.repo]
			if !ok || stored.Mode().String() != tt.mode {
				t.Fatalf("stored %+v, %v", stored, ok)
			}
			for _, id := range stored.Servers() {
				if id != strings.ToLower(id) {
					t.Errorf("stored server id %q is not lowercase", id)
				}
			}
			events := e.audit(tenantA)
			if len(events) != 1 {
				t.Fatalf("audit events = %d, want 1", len(events))
			}
			ev := events[0]
			if ev.Action != "policy.update" || ev.Target != tt.repo || ev.Actor != "token:tok-1" || !ev.At.Equal(e.clock.At) {
				t.Errorf("audit = %+v", ev)
			}
			if ev.Details["mode"] != tt.mode || ev.Details["servers"] != len(tt.in.Servers) || ev.Details["maxCalls"] != tt.calls {
				t.Errorf("audit details = %v", ev.Details)
			}
		})
	}
}

func TestGetPolicyMergeAndSource(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	d := e.deps(openGates)

	// Nothing stored: stored reads inherit, effective is off from the tenant.
	v, err := repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate})
	if err != nil {
		t.Fatal(err)
	}
	if v.Stored.Mode() != policy.ModeInherit || len(v.Stored.Servers()) != 0 || v.Stored.MaxCalls() != 5 {
		t.Errorf("stored = %s %v %d, want inherit [] 5", v.Stored.Mode(), v.Stored.Servers(), v.Stored.MaxCalls())
	}
	if v.Effective.Mode() != policy.ModeOff || v.Effective.Source() != policy.SourceTenant || v.McpActive {
		t.Errorf("effective = %s from %s, active %v; want off from tenant, inactive", v.Effective.Mode(), v.Effective.Source(), v.McpActive)
	}

	// A tenant default on: inherited, active on a private repository.
	if _, err := repositories.NewPutDefaultsHandler(d).Handle(ctx, e.p, repositories.PutDefaults{Mcp: repositories.McpInput{Mode: "on", Servers: []string{serverA1}, MaxCalls: intPtr(7)}}); err != nil {
		t.Fatal(err)
	}
	v, err = repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate})
	if err != nil {
		t.Fatal(err)
	}
	if v.Effective.Mode() != policy.ModeOn || v.Effective.Source() != policy.SourceTenant || v.Effective.MaxCalls() != 7 || !v.McpActive {
		t.Errorf("effective = %s from %s, %d calls, active %v; want on from tenant, 7, active", v.Effective.Mode(), v.Effective.Source(), v.Effective.MaxCalls(), v.McpActive)
	}

	// The public repository inherits mode on but is never active.
	v, err = repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPublic})
	if err != nil {
		t.Fatal(err)
	}
	if v.Effective.Mode() != policy.ModeOn || v.McpActive {
		t.Errorf("public: effective %s, active %v; want on, inactive", v.Effective.Mode(), v.McpActive)
	}

	// The repository's own section decides, all or nothing.
	if _, err := repositories.NewPutPolicyHandler(d).Handle(ctx, e.p, repositories.PutPolicy{RepositoryID: repoPrivate, Mcp: repositories.McpInput{Mode: "off"}}); err != nil {
		t.Fatal(err)
	}
	v, err = repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate})
	if err != nil {
		t.Fatal(err)
	}
	if v.Effective.Mode() != policy.ModeOff || v.Effective.Source() != policy.SourceRepository || v.Effective.MaxCalls() != 5 || v.McpActive {
		t.Errorf("effective = %s from %s, %d calls; want off from repository, 5", v.Effective.Mode(), v.Effective.Source(), v.Effective.MaxCalls())
	}
}

func TestGetPolicyInactiveAfterTurningPublic(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	d := e.deps(openGates)
	if _, err := repositories.NewPutPolicyHandler(d).Handle(ctx, e.p, repositories.PutPolicy{RepositoryID: repoPrivate, Mcp: repositories.McpInput{Mode: "on", Servers: []string{serverA1}}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate}); !v.McpActive {
		t.Fatal("mode on, private, gates open: want active")
	}
	if _, err := repositories.NewUpdateRepositoryHandler(d).Handle(ctx, e.p, repositories.UpdateRepository{ID: repoPrivate, Visibility: "public"}); err != nil {
		t.Fatal(err)
	}
	v, err := repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate})
	if err != nil {
		t.Fatal(err)
	}
	if v.Stored.Mode() != policy.ModeOn || v.Effective.Mode() != policy.ModeOn || v.McpActive {
		t.Errorf("after turning public: stored %s, effective %s, active %v; want on, on, inactive", v.Stored.Mode(), v.Effective.Mode(), v.McpActive)
	}
}

func TestGetPolicyInactiveWhenGatesClosed(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	if _, err := repositories.NewPutPolicyHandler(e.deps(openGates)).Handle(ctx, e.p,
		repositories.PutPolicy{RepositoryID: repoPrivate, Mcp: repositories.McpInput{Mode: "on", Servers: []string{serverA1}}}); err != nil {
		t.Fatal(err)
	}
	for _, g := range closedGates {
		v, err := repositories.NewGetPolicyHandler(e.deps(g.gates)).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate})
		if err != nil || v.McpActive {
			t.Errorf("%s: Get = active %v, %v; want inactive", g.name, v.McpActive, err)
		}
	}
}

func TestPolicyOtherTenant(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	d := e.deps(openGates)
	if _, err := repositories.NewGetPolicyHandler(d).Handle(ctx, e.other, repositories.GetPolicy{RepositoryID: repoPrivate}); restCode(err) != app.CodeNotFound {
		t.Errorf("Get of another tenant's repository = %v, want not_found", err)
	}
	_, err := repositories.NewPutPolicyHandler(d).Handle(ctx, e.other, repositories.PutPolicy{RepositoryID: repoPrivate, Mcp: repositories.McpInput{Mode: "off"}})
	if restCode(err) != app.CodeNotFound {
		t.Errorf("Put on another tenant's repository = %v, want not_found", err)
	}
	for _, id := range []string{"", "x", repoPrivate + "0", strings.Replace(repoPrivate, "-", "_", 1)} {
		if _, err := repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: id}); restCode(err) != app.CodeNotFound {
			t.Errorf("Get(%q) = %v, want not_found", id, err)
		}
	}
}

// TestGetPolicyInactiveAfterServerDeleted: policies keep server ids
// without a foreign key; a deleted server drops out of the effective
// section, and with none left MCP context is off.
func TestGetPolicyInactiveAfterServerDeleted(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	d := e.deps(openGates)
	if _, err := repositories.NewPutPolicyHandler(d).Handle(ctx, e.p, repositories.PutPolicy{RepositoryID: repoPrivate, Mcp: repositories.McpInput{Mode: "on", Servers: []string{serverA1, serverA2}}}); err != nil {
		t.Fatal(err)
	}
	delete(e.policies[tenantA].Servers, serverA1)
	v, err := repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Effective.Servers(); len(got) != 1 || got[0] != serverA2 || !v.McpActive {
		t.Errorf("one server deleted: effective %v, active %v; want [%s], active", got, v.McpActive, serverA2)
	}
	delete(e.policies[tenantA].Servers, serverA2)
	if v, _ = repositories.NewGetPolicyHandler(d).Handle(ctx, e.p, repositories.GetPolicy{RepositoryID: repoPrivate}); len(v.Effective.Servers()) != 0 || v.McpActive {
		t.Errorf("all servers deleted: effective %v, active %v; want none, inactive", v.Effective.Servers(), v.McpActive)
	}
}
