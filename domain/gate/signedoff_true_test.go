//go:build signedoff

package gate_test

import (
	"testing"

	"github.com/codelotse/codelotse/domain/gate"
)

func TestSignedOffWithTag(t *testing.T) {
	if !gate.SignedOff {
		t.Fatal("SignedOff = false with the signedoff build tag")
	}
}
