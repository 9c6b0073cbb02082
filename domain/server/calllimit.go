package server

import (
	"fmt"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

// FieldMaxCallsPerMinute is the field of the errors of [ParseCallLimit]
// and [CallCap.Check].
const FieldMaxCallsPerMinute = "maxCallsPerMinute"

// CallLimit is a server's limit of tool calls per minute (MC8), set by a
// tenant admin and held across the tenant's reviews and the service's
// replicas (the store counts the calls: ports.ServerRepo.TakeCall). The
// zero value is no limit; a set limit is 1 to
// [limits.MaxCallsPerMinute], and a call is held to the lower of it and
// the instance's [CallCap].
type CallLimit struct{ perMinute int }

// NoCallLimit is the unset limit: the server's calls are not counted.
func NoCallLimit() CallLimit { return CallLimit{} }

// ParseCallLimit reads maxCallsPerMinute: nil (absent or null) is no
// limit, else 1 to [limits.MaxCallsPerMinute] (a field error on
// maxCallsPerMinute otherwise). The instance's cap is
// [CallCap.Check]'s.
func ParseCallLimit(perMinute *int) (CallLimit, error) {
	if perMinute == nil {
		return CallLimit{}, nil
	}
	if *perMinute < 1 || *perMinute > limits.MaxCallsPerMinute {
		return CallLimit{}, &field.Error{Field: FieldMaxCallsPerMinute,
			Reason: fmt.Sprintf("must be 1 to %d, or null for no limit", limits.MaxCallsPerMinute)}
	}
	return CallLimit{perMinute: *perMinute}, nil
}

// PerMinute is the limit; ok is false when there is none.
func (l CallLimit) PerMinute() (n int, ok bool) { return l.perMinute, l.perMinute > 0 }

// CallCap is the instance's cap of every server's [CallLimit]
// (QUAVON_MCP_MAX_CALLS_PER_MINUTE): 1 to [limits.MaxCallsPerMinute]. A
// limit above it cannot be set, and a stored one above it (set before the
// operator lowered the cap) counts as the cap. The zero value is
// [limits.MaxCallsPerMinute].
type CallCap struct{ perMinute int }

// ParseCallCap reads the instance's cap, 1 to [limits.MaxCallsPerMinute].
func ParseCallCap(perMinute int) (CallCap, error) {
	if perMinute < 1 || perMinute > limits.MaxCallsPerMinute {
		return CallCap{}, fmt.Errorf("the calls-per-minute cap must be 1 to %d", limits.MaxCallsPerMinute)
	}
	return CallCap{perMinute: perMinute}, nil
}

// PerMinute is the cap.
func (c CallCap) PerMinute() int {
	if c.perMinute == 0 {
		return limits.MaxCallsPerMinute
	}
	return c.perMinute
}

// Check refuses a limit above the cap: a field error on
// maxCallsPerMinute, as a registration or a patch answers it. No limit
// passes.
func (c CallCap) Check(l CallLimit) error {
	if n, ok := l.PerMinute(); ok && n > c.PerMinute() {
		return &field.Error{Field: FieldMaxCallsPerMinute,
			Reason: fmt.Sprintf("must be at most %d, the instance's limit (QUAVON_MCP_MAX_CALLS_PER_MINUTE), or null", c.PerMinute())}
	}
	return nil
}

// Effective is the limit a call is held to: the lower of l and the cap;
// ok is false when l is unset (the calls are not counted).
func (c CallCap) Effective(l CallLimit) (perMinute int, ok bool) {
	n, ok := l.PerMinute()
	if !ok {
		return 0, false
	}
	return min(n, c.PerMinute()), true
}
