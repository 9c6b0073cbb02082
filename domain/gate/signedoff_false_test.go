//go:build !signedoff

package gate_test

import (
	"testing"

	"github.com/codelotse/codelotse/domain/gate"
)

// TestNotSignedOffByDefault guards the source: a release build without the
// signedoff tag must keep MCP context off.
func TestNotSignedOffByDefault(t *testing.T) {
	if gate.SignedOff {
		t.Fatal("SignedOff = true without the signedoff build tag; only the maintainer's sign-off may change it")
	}
}
