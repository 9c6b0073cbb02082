//go:build !signedoff

package reviews_test

import (
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
)

// TestSignOffConstantFalseTouchesNothing: with the gates built from the
// sign-off constant as the source has it (false), on an instance that
// allows MCP context, a queued review reads no server row, policy,
// repository or call record, opens no MCP session and sends nothing.
func TestSignOffConstantFalseTouchesNothing(t *testing.T) {
	gates := app.NewGates(gate.InstanceAllowed, gate.SelfHosted)
	if gates.SignedOff {
		t.Fatalf("NewGates().SignedOff = true in a build without the signedoff tag")
	}
	checkUntouched(t, gates)
}
