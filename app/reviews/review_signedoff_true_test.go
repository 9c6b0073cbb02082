//go:build signedoff

package reviews_test

import (
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
)

// TestSignOffConstantTrueOpensTheGate: the signedoff build's gates come
// from the constant (true), and the instance switch alone still closes
// them.
func TestSignOffConstantTrueOpensTheGate(t *testing.T) {
	gates := app.NewGates(gate.InstanceDisabled, gate.SelfHosted)
	if !gates.SignedOff {
		t.Fatalf("NewGates().SignedOff = false in the signedoff build")
	}
	checkUntouched(t, gates)
}
