package portfake

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/codelotse/codelotse/ports"
)

// Audit records events in memory.
type Audit struct{ Events []ports.AuditEvent }

func (a *Audit) Append(_ context.Context, e ports.AuditEvent) error {
	a.Events = append(a.Events, e)
	return nil
}

// Recent returns the events newest first (by At, the last appended first
// on a tie), their details as the store's JSON column gives them back.
// Events keeps them as appended.
func (a *Audit) Recent(_ context.Context, limit int) ([]ports.AuditEvent, error) {
	out := slices.Clone(a.Events)
	slices.Reverse(out)
	slices.SortStableFunc(out, func(x, y ports.AuditEvent) int { return y.At.Compare(x.At) })
	out = firstN(out, limit)
	for i := range out {
		d, err := viaJSON(out[i].Details)
		if err != nil {
			return nil, err
		}
		out[i].Details = d
	}
	return out, nil
}

// viaJSON returns details as a JSON column stores them: numbers as
// float64, slices as []any.
func viaJSON(details map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if details == nil {
		return out, nil
	}
	b, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	return out, json.Unmarshal(b, &out)
}
