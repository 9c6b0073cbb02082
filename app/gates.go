package app

import (
	"errors"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/ports"
)

// Gates is the instance's answer to "may MCP context change or run": the
// sign-off constant, QUAVON_MCP_CONTEXT and the edition. Every MCP change
// (but deleting a server) checks it first.
type Gates struct {
	SignedOff bool
	Instance  gate.Instance
	Edition   gate.Edition
}

// NewGates reads the sign-off constant; instance and edition come from
// the configuration.
func NewGates(instance gate.Instance, edition gate.Edition) Gates {
	return Gates{SignedOff: gate.SignedOff, Instance: instance, Edition: edition}
}

// Check returns not_signed_off or instance_disabled, or nil when open.
func (g Gates) Check() error {
	err := gate.Check(g.SignedOff, g.Instance.Allowed())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gate.ErrNotSignedOff):
		return Fail(CodeNotSignedOff, "MCP context awaits the security sign-off")
	default:
		return Fail(CodeInstanceDisabled, "this instance does not allow MCP context")
	}
}

// Actor names the caller in audit events: the token, never its secret.
func Actor(p ports.Principal) string { return "token:" + p.TokenID }
