package app_test

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/ports"
)

func TestStatus(t *testing.T) {
	for _, g := range []struct {
		name  string
		gates app.Gates
	}{
		{"not signed off", app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}},
		{"not signed off and disabled", app.Gates{SignedOff: false, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}},
		{"instance disabled", app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.Enterprise}},
		{"instance unset", app.Gates{SignedOff: true}},
		{"open", app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}},
	} {
		s := app.NewStatusHandler(g.gates).Handle(context.Background(), ports.Principal{})
		if s.SignedOff != g.gates.SignedOff || s.Instance.Allowed() != g.gates.Instance.Allowed() ||
			s.Instance.String() == "" || s.Edition.String() == "" {
			t.Errorf("%s: Status = %+v", g.name, s)
		}
	}
}
