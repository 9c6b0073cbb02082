package budget_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/budget"
	"github.com/codelotse/codelotse/domain/limits"
)

func TestNewRunBudget(t *testing.T) {
	tests := []struct {
		maxCalls int
		ok       bool
	}{
		{limits.MinCallsPerRun, true},
		{limits.DefaultCallsPerRun, true},
		{limits.MaxCallsPerRun, true},
		{limits.MinCallsPerRun - 1, false},
		{limits.MaxCallsPerRun + 1, false},
		{-1, false},
	}
	for _, tt := range tests {
		b, err := budget.NewRunBudget(tt.maxCalls)
		if (err == nil) != tt.ok {
			t.Errorf("NewRunBudget(%d) = %v, want ok %v", tt.maxCalls, err, tt.ok)
			continue
		}
		var ie *budget.InvalidMaxCallsError
		if !tt.ok && (!errors.As(err, &ie) || ie.MaxCalls != tt.maxCalls || err.Error() == "") {
			t.Errorf("NewRunBudget(%d) = %v, want *InvalidMaxCallsError", tt.maxCalls, err)
		}
		if tt.ok && (b.MaxCalls() != tt.maxCalls || b.Calls() != 0 || b.BytesUsed() != 0) {
			t.Errorf("NewRunBudget(%d) = %+v", tt.maxCalls, b.Stats())
		}
	}
}

// step is one action in a budget scenario: "reserve" (wantErr is what
// Reserve returns), or "commit N"/"release" on the i-th reservation.
// A scenario's reserve is TryReserve, Reserve's one look without the
// wait: where Reserve would wait it returns ErrWouldWait and claims
// nothing.
type step struct {
	op      string
	res     int
	n       int
	wantErr error
}

func TestScenarios(t *testing.T) {
	const kib = 1 << 10
	wouldWait := budget.ErrWouldWait
	r := func(want error) step { return step{op: "reserve", wantErr: want} }
	c := func(i, n int, want error) step { return step{op: "commit", res: i, n: n, wantErr: want} }
	rel := func(i int) step { return step{op: "release", res: i} }
	tests := []struct {
		name      string
		maxCalls  int
		steps     []step
		wantCalls int
		wantUsed  int
	}{
		{"calls exhausted", 2, []step{r(nil), c(0, 10, nil), r(nil), c(1, 10, nil), r(budget.ErrCallsExhausted)}, 2, 20},
		{"four open reservations fill the bytes: the fifth would wait", 20, []step{r(nil), r(nil), r(nil), r(nil), r(wouldWait)}, 4, 0},
		{"commit returns the unused part", 20, []step{r(nil), r(nil), r(nil), r(nil), c(0, 0, nil), r(nil), r(wouldWait)}, 5, 0},
		{"a kept byte blocks the next reservation while others are open", 20, []step{r(nil), r(nil), r(nil), r(nil), c(0, kib, nil), r(wouldWait)}, 4, kib},
		{"once the last open reservation ends, a short budget fails at once", 20, []step{
			r(nil), r(nil), r(nil), r(nil), c(0, limits.CallReservation, nil), r(wouldWait), c(1, limits.CallReservation, nil), r(wouldWait),
			c(2, 1, nil), r(wouldWait), c(3, limits.CallReservation, nil), r(budget.ErrBytesExhausted),
		}, 4, 3*limits.CallReservation + 1},
		{"release returns everything but counts", 20, []step{r(nil), rel(0), r(nil), rel(1)}, 2, 0},
		{"three full results leave room for one more after the fourth is released", 20, []step{
			r(nil), r(nil), r(nil), r(nil), r(wouldWait),
			c(0, limits.CallReservation, nil), c(1, limits.CallReservation, nil), c(2, limits.CallReservation, nil), r(wouldWait),
			rel(3), r(nil), r(wouldWait), c(4, 1, nil), r(budget.ErrBytesExhausted),
		}, 5, 3*limits.CallReservation + 1},
		{"full results exhaust the run", 20, []step{
			r(nil), c(0, limits.CallReservation, nil), r(nil), c(1, limits.CallReservation, nil),
			r(nil), c(2, limits.CallReservation, nil), r(nil), c(3, limits.CallReservation, nil),
			r(budget.ErrBytesExhausted),
		}, 4, limits.RunByteBudget},
		{"one byte short of a reservation", 20, []step{
			r(nil), c(0, limits.CallReservation, nil), r(nil), c(1, limits.CallReservation, nil),
			r(nil), c(2, limits.CallReservation, nil), r(nil), c(3, 1, nil),
			r(budget.ErrBytesExhausted),
		}, 4, 3*limits.CallReservation + 1},
		{"calls checked before bytes", 4, []step{r(nil), r(nil), r(nil), r(nil), r(budget.ErrCallsExhausted)}, 4, 0},
		{"calls checked before waiting; waiting claims no call", 5, []step{
			r(nil), r(nil), r(nil), r(nil), r(wouldWait), r(wouldWait), r(wouldWait), c(0, 0, nil), r(nil), r(budget.ErrCallsExhausted),
		}, 5, 0},
		{"oversized result keeps the reservation", 20, []step{r(nil), c(0, limits.CallReservation+1, budget.ErrResultTooLarge)}, 1, limits.CallReservation},
		{"negative is zero", 20, []step{r(nil), c(0, -5, nil)}, 1, 0},
		{"double commit", 20, []step{r(nil), c(0, 100, nil), c(0, 200, nil), rel(0)}, 1, 100},
		{"release then commit", 20, []step{r(nil), rel(0), c(0, 200, nil), rel(0)}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := budget.NewRunBudget(tt.maxCalls)
			if err != nil {
				t.Fatal(err)
			}
			var res []*budget.Reservation
			for i, s := range tt.steps {
				var err error
				switch s.op {
				case "reserve":
					var r *budget.Reservation
					r, err = b.TryReserve()
					if err == nil {
						res = append(res, r)
					} else if r != nil {
						t.Errorf("step %d: Reserve() returned a reservation with %v", i, err)
					}
				case "commit":
					err = res[s.res].Commit(s.n)
				case "release":
					res[s.res].Release()
				}
				if !errors.Is(err, s.wantErr) {
					t.Fatalf("step %d: %s(%d) = %v, want %v", i, s.op, s.n, err, s.wantErr)
				}
				st := b.Stats()
				if st.BytesUsed+st.BytesReserved > limits.RunByteBudget || st.Calls > tt.maxCalls {
					t.Fatalf("step %d: stats %+v exceed the budget", i, st)
				}
			}
			if b.Calls() != tt.wantCalls || b.BytesUsed() != tt.wantUsed {
				t.Errorf("Calls() = %d, BytesUsed() = %d, want %d, %d", b.Calls(), b.BytesUsed(), tt.wantCalls, tt.wantUsed)
			}
		})
	}
}

// TestDoneContextClaimsNothing: a Reserve whose context is done gets no
// reservation, even with the whole budget free.
func TestDoneContextClaimsNothing(t *testing.T) {
	b, _ := budget.NewRunBudget(limits.DefaultCallsPerRun)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := b.Reserve(done); r != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve(done) = %v, %v; want context.Canceled", r, err)
	}
	if st := b.Stats(); st != (budget.Stats{}) {
		t.Errorf("stats %+v, want nothing claimed", st)
	}
	if r, err := b.Reserve(context.Background()); r == nil || err != nil {
		t.Errorf("Reserve() = %v, %v", r, err)
	}
}

func TestNilReservation(t *testing.T) {
	var r *budget.Reservation
	if err := r.Commit(1); err != nil {
		t.Errorf("nil Commit() = %v", err)
	}
	r.Release()
}

// TestConcurrent hammers one budget from many goroutines that reserve,
// hold for a while and end their reservations in varying order; run it
// with -race. At every observation the counters stay within maxCalls and
// the byte budget; no Reserve is left hanging (each has a generous
// deadline, and a deadline error fails the test); a Reserve that fails
// for bytes or calls does so only when the run really ran out of them:
// when results keep few bytes, no call ever fails for bytes and exactly
// maxCalls calls are granted.
func TestConcurrent(t *testing.T) {
	tests := []struct {
		name     string
		maxCalls int
		small    bool // results keep at most a few bytes: the bytes never run out
	}{
		{"one call", limits.MinCallsPerRun, true},
		{"default calls, small results", limits.DefaultCallsPerRun, true},
		{"max calls, small results", limits.MaxCallsPerRun, true},
		{"default calls, large results", limits.DefaultCallsPerRun, false},
		{"max calls, large results", limits.MaxCallsPerRun, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := budget.NewRunBudget(tt.maxCalls)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var granted, bytesFailed, callsFailed atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{})
			for g := range 64 {
				wg.Go(func() {
					<-start
					for i := range 20 {
						st := b.Stats()
						if st.Calls > tt.maxCalls || st.BytesUsed+st.BytesReserved > limits.RunByteBudget || st.BytesReserved < 0 {
							t.Errorf("stats %+v exceed maxCalls %d or the byte budget", st, tt.maxCalls)
							return
						}
						r, err := b.Reserve(ctx)
						switch {
						case errors.Is(err, budget.ErrBytesExhausted):
							bytesFailed.Add(1)
							continue
						case errors.Is(err, budget.ErrCallsExhausted):
							callsFailed.Add(1)
							continue
						case err != nil:
							t.Errorf("Reserve() = %v: a waiter was never woken", err)
							return
						}
						granted.Add(1)
						// Hold it a varying while, so that calls overlap and
						// end in varying order.
						time.Sleep(time.Duration(g%7+1) * 100 * time.Microsecond)
						switch (g + i) % 5 {
						case 0:
							r.Release()
						case 1:
							if tt.small {
								_ = r.Commit(0)
							} else {
								_ = r.Commit(limits.CallReservation)
							}
							r.Release()
						case 2:
							if tt.small {
								_ = r.Commit(-1)
							} else {
								_ = r.Commit(limits.CallReservation * 2)
							}
						case 3:
							r.Release()
							_ = r.Commit(limits.CallReservation)
						default:
							_ = r.Commit((g * 997) % 100)
							_ = r.Commit(1)
						}
					}
				})
			}
			close(start)
			wg.Wait()
			st := b.Stats()
			if st.Calls > tt.maxCalls || int(granted.Load()) != st.Calls || st.BytesUsed > limits.RunByteBudget || st.BytesReserved != 0 || b.Waiting() != 0 {
				t.Errorf("final stats %+v, granted %d, waiting %d", st, granted.Load(), b.Waiting())
			}
			if bytesFailed.Load() > 0 && limits.RunByteBudget-st.BytesUsed >= limits.CallReservation {
				t.Errorf("%d calls failed for bytes, but %d bytes are left", bytesFailed.Load(), limits.RunByteBudget-st.BytesUsed)
			}
			if callsFailed.Load() > 0 && st.Calls != tt.maxCalls {
				t.Errorf("%d calls failed for calls, but only %d of %d were made", callsFailed.Load(), st.Calls, tt.maxCalls)
			}
			if tt.small && (bytesFailed.Load() != 0 || st.Calls != tt.maxCalls) {
				t.Errorf("small results: %d failed for bytes, %d calls made; want 0 and %d", bytesFailed.Load(), st.Calls, tt.maxCalls)
			}
		})
	}
}

// result is what one waiting Reserve returned.
type result struct {
	r   *budget.Reservation
	err error
}

// reserveAll starts n Reserves with ctx and waits until all of them wait.
func reserveAll(t *testing.T, ctx context.Context, b *budget.RunBudget, n int) <-chan result {
	t.Helper()
	out := make(chan result, n)
	before := b.Waiting()
	for range n {
		go func() {
			r, err := b.Reserve(ctx)
			out <- result{r, err}
		}()
	}
	eventually(t, func() bool { return b.Waiting() == before+n }, "%d Reserves waiting", n)
	return out
}

// eventually polls cond for a few seconds.
func eventually(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: "+format, args...)
		}
	}
}

// take receives n results, or fails after a few seconds.
func take(t *testing.T, ch <-chan result, n int) []result {
	t.Helper()
	var out []result
	timeout := time.After(5 * time.Second)
	for range n {
		select {
		case r := <-ch:
			out = append(out, r)
		case <-timeout:
			t.Fatalf("got %d results, want %d: a waiter was not woken", len(out), n)
		}
	}
	return out
}

// none checks that no further result arrives for a short while.
func none(t *testing.T, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("unexpected result %+v: a waiter went on without room", r)
	case <-time.After(20 * time.Millisecond):
	}
}

// fill takes n reservations at once.
func fill(t *testing.T, b *budget.RunBudget, n int) []*budget.Reservation {
	t.Helper()
	var out []*budget.Reservation
	for range n {
		r, err := b.Reserve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestWaitersTakeEachFreedReservation: with four reservations open, eight
// more callers wait; every reservation that ends (released or committed
// empty) lets exactly one waiter through, and all eight end up with a
// reservation, none failing while the run has budget left.
func TestWaitersTakeEachFreedReservation(t *testing.T) {
	b, _ := budget.NewRunBudget(limits.MaxCallsPerRun)
	open := fill(t, b, 4)
	waiters := reserveAll(t, context.Background(), b, 8)
	none(t, waiters)
	var got []*budget.Reservation
	for i, r := range open {
		if i%2 == 0 {
			r.Release()
		} else {
			_ = r.Commit(0)
		}
		res := take(t, waiters, 1)[0]
		if res.err != nil {
			t.Fatalf("waiter %d: %v", i, res.err)
		}
		got = append(got, res.r)
		none(t, waiters)
	}
	// The other four are still waiting; end all four new ones at once.
	if b.Waiting() != 4 {
		t.Fatalf("waiting = %d, want 4", b.Waiting())
	}
	for _, r := range got {
		_ = r.Commit(0)
	}
	for _, res := range take(t, waiters, 4) {
		if res.err != nil {
			t.Fatalf("waiter: %v", res.err)
		}
		_ = res.r.Commit(5)
	}
	if st := b.Stats(); st.Calls != 12 || st.BytesUsed != 20 || st.BytesReserved != 0 || b.Waiting() != 0 {
		t.Errorf("stats %+v, waiting %d; want 12 calls, 20 bytes", st, b.Waiting())
	}
}

// TestWaitersFailWhenTheLastOpenReservationLeavesTooLittle: waiters keep
// waiting while an open reservation could still give a reservation's
// worth back, and all fail with ErrBytesExhausted as soon as the last one
// commits and leaves less than a reservation.
func TestWaitersFailWhenTheLastOpenReservationLeavesTooLittle(t *testing.T) {
	b, _ := budget.NewRunBudget(limits.MaxCallsPerRun)
	open := fill(t, b, 4)
	waiters := reserveAll(t, context.Background(), b, 6)
	for _, r := range open[:3] {
		_ = r.Commit(limits.CallReservation)
		none(t, waiters) // the fourth could still be released: keep waiting
	}
	_ = open[3].Commit(1)
	for _, res := range take(t, waiters, 6) {
		if !errors.Is(res.err, budget.ErrBytesExhausted) || res.r != nil {
			t.Errorf("waiter = %+v, want ErrBytesExhausted", res)
		}
	}
	if st := b.Stats(); st.Calls != 4 || st.BytesUsed != 3*limits.CallReservation+1 || st.BytesReserved != 0 || b.Waiting() != 0 {
		t.Errorf("stats %+v, waiting %d", st, b.Waiting())
	}
}

// TestWaitersFailWhenTheCallsRunOut: a freed reservation goes to one
// waiter, which makes the last call; the other waiters fail with
// ErrCallsExhausted at once, and maxCalls is never exceeded.
func TestWaitersFailWhenTheCallsRunOut(t *testing.T) {
	b, _ := budget.NewRunBudget(5)
	open := fill(t, b, 4)
	waiters := reserveAll(t, context.Background(), b, 3)
	open[2].Release()
	ok, exhausted := 0, 0
	for _, res := range take(t, waiters, 3) {
		switch {
		case res.err == nil:
			ok++
		case errors.Is(res.err, budget.ErrCallsExhausted):
			exhausted++
		default:
			t.Errorf("waiter: %v", res.err)
		}
	}
	if ok != 1 || exhausted != 2 || b.Calls() != 5 || b.Waiting() != 0 {
		t.Errorf("%d granted, %d calls exhausted, %d calls made; want 1, 2, 5", ok, exhausted, b.Calls())
	}
}

// TestCancelledWaitClaimsNothing: a Reserve whose context ends while it
// waits returns the context's error and claims nothing; the other waiters
// and the budget are unaffected.
func TestCancelledWaitClaimsNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := budget.NewRunBudget(limits.MaxCallsPerRun)
			open := fill(t, b, 4)
			other := reserveAll(t, context.Background(), b, 1)
			ctx, cancel := tt.ctx()
			defer cancel()
			cancelled := make(chan result, 2)
			for range 2 {
				go func() {
					r, err := b.Reserve(ctx)
					cancelled <- result{r, err}
				}()
			}
			if tt.want == context.Canceled {
				// Cancel and free a reservation at once: the cancelled
				// waiters wake with both, and still get nothing.
				eventually(t, func() bool { return b.Waiting() == 3 }, "3 Reserves waiting")
				cancel()
				open[0].Release()
			}
			for _, res := range take(t, cancelled, 2) {
				if !errors.Is(res.err, tt.want) || res.r != nil {
					t.Errorf("cancelled waiter = %+v, want %v", res, tt.want)
				}
			}
			if tt.want != context.Canceled {
				if st := b.Stats(); st.Calls != 4 || st.BytesReserved != 4*limits.CallReservation || b.Waiting() != 1 {
					t.Errorf("after the deadline: stats %+v, waiting %d", st, b.Waiting())
				}
				none(t, other)
				open[0].Release()
			}
			if res := take(t, other, 1)[0]; res.err != nil {
				t.Errorf("the other waiter: %v", res.err)
			}
			if b.Calls() != 5 || b.Waiting() != 0 {
				t.Errorf("calls %d, waiting %d; want 5, 0", b.Calls(), b.Waiting())
			}
		})
	}
}

func TestResumeRunBudget(t *testing.T) {
	tests := []struct {
		name            string
		calls, bytes    int
		wantReservation int // how many calls (each committed empty) still succeed
	}{
		{"fresh", 0, 0, 5},
		{"two calls made", 2, 0, 3},
		{"bytes used", 0, 200 << 10, 0}, // 56 KiB left: less than a reservation
		{"some bytes", 1, 100 << 10, 4},
		{"over the limits", 9, 1 << 20, 0},
		{"negative", -3, -1, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := budget.ResumeRunBudget(5, tt.calls, tt.bytes)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				r, err := b.TryReserve()
				if err != nil {
					break
				}
				n++
				if err := r.Commit(0); err != nil {
					t.Fatal(err)
				}
				if n > 10 {
					break
				}
			}
			if n != tt.wantReservation {
				t.Errorf("ResumeRunBudget(5, %d, %d): %d more calls, want %d", tt.calls, tt.bytes, n, tt.wantReservation)
			}
		})
	}
	if _, err := budget.ResumeRunBudget(0, 0, 0); err == nil {
		t.Errorf("ResumeRunBudget(0, …) = nil error, want invalid maxCalls")
	}
}
