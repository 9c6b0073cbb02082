// Package budget enforces the per-run limits of MC8 on MCP tool calls: at
// most maxCalls calls, and at most limits.RunByteBudget bytes of accepted
// results. Every call reserves limits.CallReservation bytes before it is
// sent, so concurrent calls can never together exceed the byte budget.
// A call that finds every byte reserved by calls still in flight waits
// for one of them to end ([RunBudget.Reserve]) instead of failing while
// the run has budget left.
package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/codelotse/codelotse/domain/limits"
)

// Errors of [RunBudget.Reserve] and [Reservation.Commit]. Reserve also
// returns its context's error when the context is done before it gets a
// reservation.
var (
	// ErrCallsExhausted: the run has made maxCalls calls (status budget_exhausted).
	ErrCallsExhausted = errors.New("call budget exhausted")
	// ErrBytesExhausted: less than one reservation is left of the run's
	// byte budget and no open reservation could give bytes back (status
	// budget_exhausted).
	ErrBytesExhausted = errors.New("byte budget exhausted")
	// ErrResultTooLarge: a committed result was larger than its
	// reservation and must be refused (status too_large).
	ErrResultTooLarge = errors.New("result larger than its reservation")
)

// InvalidMaxCallsError is a maxCalls outside
// limits.MinCallsPerRun–limits.MaxCallsPerRun.
type InvalidMaxCallsError struct {
	// MaxCalls is the rejected value.
	MaxCalls int
}

// Error implements error.
func (e *InvalidMaxCallsError) Error() string {
	return fmt.Sprintf("maxCalls %d is not between %d and %d", e.MaxCalls, limits.MinCallsPerRun, limits.MaxCallsPerRun)
}

// RunBudget is the budget of one review run. It is safe for concurrent use.
type RunBudget struct {
	mu       sync.Mutex
	maxCalls int
	calls    int
	reserved int // bytes held by open reservations
	used     int // bytes kept by committed calls
	// changed is closed (and cleared) whenever an open reservation ends,
	// waking every Reserve that waits for bytes; a waiter takes it under
	// mu, so no end of a reservation after its check can be missed.
	changed chan struct{}
	waiting int // callers inside Reserve waiting for bytes
}

// NewRunBudget starts a run's budget with the effective policy's maxCalls.
func NewRunBudget(maxCalls int) (*RunBudget, error) {
	if maxCalls < limits.MinCallsPerRun || maxCalls > limits.MaxCallsPerRun {
		return nil, &InvalidMaxCallsError{MaxCalls: maxCalls}
	}
	return &RunBudget{maxCalls: maxCalls}, nil
}

// ResumeRunBudget continues a run's budget after an earlier attempt of the
// same run (a retried job) made calls and kept bytes: the budget is per
// run, not per attempt. Negative values count as zero; values above the
// limits exhaust the budget.
func ResumeRunBudget(maxCalls, calls, bytesUsed int) (*RunBudget, error) {
	b, err := NewRunBudget(maxCalls)
	if err != nil {
		return nil, err
	}
	b.calls = max(calls, 0)
	b.used = max(bytesUsed, 0)
	return b, nil
}

// Reserve claims one call and limits.CallReservation bytes before a call is
// sent. The call counts from here on, whatever happens to it; a failed
// Reserve claims nothing.
//
// In order, under one lock:
//   - ctx is done: ctx.Err(), so a call never gets a reservation after
//     its run's deadline;
//   - maxCalls calls were made: [ErrCallsExhausted], at once;
//   - a reservation's bytes are free: the call and the bytes are claimed
//     together;
//   - no reservation is open: nothing can ever give bytes back (kept
//     bytes are never returned), so [ErrBytesExhausted], at once. While
//     one is open, room can still appear: used and reserved bytes never
//     exceed the budget together, so releasing it would free a whole
//     reservation;
//   - otherwise Reserve waits until a reservation ends or ctx is done,
//     and checks again from the top.
//
// The call is claimed after the wait, together with the bytes, so a
// waiting caller holds no call: maxCalls counts only calls that got
// their bytes and is never exceeded, and a waiter that finds the last
// call taken fails with [ErrCallsExhausted]. Every end of a reservation
// wakes every waiter; the first to take the lock gets the bytes, the
// others wait again or fail (no order among waiters is promised). A
// waiter sleeps only while no reservation's bytes are free, and bytes
// become free only when a reservation ends, which wakes it: so no waiter
// sleeps through room appearing, the last call being taken, or the last
// open reservation ending.
func (b *RunBudget) Reserve(ctx context.Context) (*Reservation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := b.try()
		if err != errWouldWait {
			return r, err
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.waiting++
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		b.mu.Lock()
		b.waiting--
	}
}

// errWouldWait: try found no free bytes, but an open reservation could
// give them back.
var errWouldWait = errors.New("would wait")

// try is one look at the budget, b.mu held: a reservation, a final
// error, or errWouldWait.
func (b *RunBudget) try() (*Reservation, error) {
	switch {
	case b.calls >= b.maxCalls:
		return nil, ErrCallsExhausted
	case limits.RunByteBudget-b.used-b.reserved >= limits.CallReservation:
		b.calls++
		b.reserved += limits.CallReservation
		return &Reservation{budget: b}, nil
	case b.reserved == 0:
		return nil, ErrBytesExhausted
	}
	return nil, errWouldWait
}

// ended wakes every waiting Reserve after a reservation ended; b.mu is
// held.
func (b *RunBudget) ended() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// Stats is a consistent snapshot of a [RunBudget].
type Stats struct {
	// Calls is the number of successful reservations.
	Calls int
	// BytesUsed is the bytes kept by committed calls.
	BytesUsed int
	// BytesReserved is the bytes held by open reservations.
	BytesReserved int
}

// Stats returns all counters taken under one lock.
func (b *RunBudget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Calls: b.calls, BytesUsed: b.used, BytesReserved: b.reserved}
}

// Calls is the number of calls made (successful reservations).
func (b *RunBudget) Calls() int { return b.Stats().Calls }

// BytesUsed is the bytes kept by committed calls (the run stats' bytes).
func (b *RunBudget) BytesUsed() int { return b.Stats().BytesUsed }

// MaxCalls is the run's call limit.
func (b *RunBudget) MaxCalls() int { return b.maxCalls }

// Reservation is one call's claim on a [RunBudget]. Exactly one of Commit
// or Release takes effect; later calls of either are no-ops, so a deferred
// Release after a Commit is safe.
type Reservation struct {
	budget *RunBudget
	done   bool // guarded by budget.mu
}

// Commit ends the reservation for a result of acceptedBytes and gives the
// unused part of the reservation back. A result larger than the
// reservation cannot be accepted: the whole reservation is kept (the
// server made the run read that much) and [ErrResultTooLarge] tells the
// caller to refuse the result. A negative size counts as zero.
func (r *Reservation) Commit(acceptedBytes int) error {
	if r == nil {
		return nil
	}
	b := r.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.done {
		return nil
	}
	r.done = true
	b.reserved -= limits.CallReservation
	b.ended()
	keep := max(acceptedBytes, 0)
	if keep > limits.CallReservation {
		b.used += limits.CallReservation
		return ErrResultTooLarge
	}
	b.used += keep
	return nil
}

// Release ends a failed call's reservation and returns all its bytes. The
// call still counts against maxCalls.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	b := r.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	b.reserved -= limits.CallReservation
	b.ended()
}
