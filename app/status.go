package app

import (
	"context"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/ports"
)

// Status is what GET /v1/mcp/status answers: whether MCP context is
// signed off, what the instance switch says and the edition.
type Status struct {
	SignedOff bool
	Instance  gate.Instance
	Edition   gate.Edition
}

// StatusHandler reports the gates to any valid token (the UI shows the
// notice from it). Safe for concurrent use.
type StatusHandler struct {
	gates Gates
}

// NewStatusHandler returns a [StatusHandler] for the instance's gates.
func NewStatusHandler(gates Gates) *StatusHandler { return &StatusHandler{gates: gates} }

// Handle returns the status. An unset instance reads as disabled and an
// unset edition as enterprise, the stricter readings of the zero values.
func (h *StatusHandler) Handle(_ context.Context, _ ports.Principal) Status {
	s := Status{SignedOff: h.gates.SignedOff, Instance: h.gates.Instance, Edition: h.gates.Edition}
	if !s.Instance.Allowed() {
		s.Instance = gate.InstanceDisabled
	}
	if s.Edition != gate.SelfHosted {
		s.Edition = gate.Enterprise
	}
	return s
}
