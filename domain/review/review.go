// Package review holds the rules of a review run that every layer shares:
// the run itself ([Run]: its request, its states and their transitions,
// its result), and the closed set of a tool call's statuses. The metric's outcomes (adapters/metrics), the CHECK
// constraints of review_runs.status and mcp_tool_calls.status (migrations/)
// and the API's call records (openapi.yaml) use these sets; tests in
// those adapters compare them with [RunStatuses] and [CallStatuses].
package review

// RunStatus is the state of a review run: queued → running → done or
// failed. A running run may start again (a rescued attempt continues it);
// a finished one never moves ([Run] holds the transitions).
type RunStatus string

// The states of a review run.
const (
	Queued  RunStatus = "queued"
	Running RunStatus = "running"
	Done    RunStatus = "done"
	Failed  RunStatus = "failed"
)

// RunStatuses is every state, in the order of the lifecycle.
func RunStatuses() []RunStatus { return []RunStatus{Queued, Running, Done, Failed} }

// Valid reports whether s is one of [RunStatuses].
func (s RunStatus) Valid() bool {
	return s == Queued || s == Running || s.Finished()
}

// Finished reports whether the run is done or failed: nothing moves it
// again.
func (s RunStatus) Finished() bool { return s == Done || s == Failed }

// CanStart reports whether an attempt may start the run: a queued run, or
// a running one whose earlier attempt died.
func (s RunStatus) CanStart() bool { return s == Queued || s == Running }

// CallStatus is the outcome of one MCP tool call of a review.
type CallStatus string

// The outcomes of a tool call.
const (
	CallOK               CallStatus = "ok"
	CallError            CallStatus = "error"
	CallBlocked          CallStatus = "blocked"
	CallTooLarge         CallStatus = "too_large"
	CallUnavailable      CallStatus = "unavailable"
	CallBudgetExhausted  CallStatus = "budget_exhausted"
	CallInvalidArguments CallStatus = "invalid_arguments"
	// CallRateLimited: the server answered 429, or asked earlier in the
	// run to wait and the wait has not passed, or the server's
	// calls-per-minute limit (across reviews) is reached or could not be
	// counted; nothing was sent then.
	CallRateLimited CallStatus = "rate_limited"
)

// CallStatuses is every outcome of a tool call.
func CallStatuses() []CallStatus {
	return []CallStatus{CallOK, CallError, CallBlocked, CallTooLarge, CallUnavailable, CallBudgetExhausted, CallInvalidArguments, CallRateLimited}
}

// Valid reports whether s is one of [CallStatuses].
func (s CallStatus) Valid() bool {
	for _, c := range CallStatuses() {
		if s == c {
			return true
		}
	}
	return false
}
