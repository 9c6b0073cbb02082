package repositories_test

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports/portfake"
)

func TestGetDefaultsWhenNoneStored(t *testing.T) {
	e := newRestEnv(t)
	s, err := repositories.NewGetDefaultsHandler(e.deps(openGates)).Handle(context.Background(), e.p, repositories.GetDefaults{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode() != policy.ModeOff || s.Servers() == nil || len(s.Servers()) != 0 || s.MaxCalls() != 5 {
		t.Errorf("Get = %s %v %d, want off [] 5", s.Mode(), s.Servers(), s.MaxCalls())
	}
}

func TestPutDefaults(t *testing.T) {
	tests := []struct {
		name  string
		in    repositories.McpInput
		want  app.Code
		field string
		calls int
	}{
		{name: "on", in: repositories.McpInput{Mode: "on", Servers: []string{serverA1, serverA2}}, calls: 5},
		{name: "off", in: repositories.McpInput{Mode: "off", MaxCalls: intPtr(20)}, calls: 20},
		{name: "inherit", in: repositories.McpInput{Mode: "inherit"}, want: app.CodeValidationFailed, field: "mcp.mode"},
		{name: "maxCalls 0", in: repositories.McpInput{Mode: "on", MaxCalls: intPtr(0)}, want: app.CodeValidationFailed, field: "mcp.maxCalls"},
		{name: "maxCalls 21", in: repositories.McpInput{Mode: "on", MaxCalls: intPtr(21)}, want: app.CodeValidationFailed, field: "mcp.maxCalls"},
		{name: "six servers", in: repositories.McpInput{Mode: "on", Servers: []string{portfake.UUID(1), portfake.UUID(2), portfake.UUID(3), portfake.UUID(4), portfake.UUID(5), portfake.UUID(6)}}, want: app.CodeValidationFailed, field: "mcp.servers"},
		{name: "another tenant's server", in: repositories.McpInput{Mode: "on", Servers: []string{serverB1}}, want: app.CodeUnknownServer},
		{name: "malformed server", in: repositories.McpInput{Mode: "off", Servers: []string{"wiki"}}, want: app.CodeUnknownServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRestEnv(t)
			d := e.deps(openGates)
			s, err := repositories.NewPutDefaultsHandler(d).Handle(context.Background(), e.p, repositories.PutDefaults{Mcp: tt.in})
			if restCode(err) != tt.want {
				t.Fatalf("Put = %v, want %q", err, tt.want)
			}
			if tt.want != "" {
				if tt.field != "" {
					if _, ok := app.AsError(err).Fields[tt.field]; !ok {
						t.Errorf("fields = %v, want %s", app.AsError(err).Fields, tt.field)
					}
				}
				if len(e.audit(tenantA)) != 0 || e.policies[tenantA].Def != nil {
					t.Error("a refused PUT changed something")
				}
				return
			}
			if s.MaxCalls() != tt.calls || e.policies[tenantA].Def == nil {
				t.Errorf("Put = %d calls (stored %v), want %d", s.MaxCalls(), e.policies[tenantA].Def, tt.calls)
			}
			got, err := repositories.NewGetDefaultsHandler(d).Handle(context.Background(), e.p, repositories.GetDefaults{})
			if err != nil || got.Mode().String() != tt.in.Mode {
				t.Errorf("Get after Put = %s, %v", got.Mode(), err)
			}
			events := e.audit(tenantA)
			if len(events) != 1 || events[0].Action != "policy.defaults" || events[0].Details["servers"] != len(tt.in.Servers) {
				t.Errorf("audit = %+v", events)
			}
		})
	}
}
