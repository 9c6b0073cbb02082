package budget_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

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
type step struct {
	op      string
	res     int
	n       int
	wantErr error
}

func TestScenarios(t *testing.T) {
	const kib = 1 << 10
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
		{"four open reservations fill the bytes", 20, []step{r(nil), r(nil), r(nil), r(nil), r(budget.ErrBytesExhausted)}, 4, 0},
		{"commit returns the unused part", 20, []step{r(nil), r(nil), r(nil), r(nil), c(0, 0, nil), r(nil), r(budget.ErrBytesExhausted)}, 5, 0},
		{"a kept byte blocks the next reservation", 20, []step{r(nil), r(nil), r(nil), r(nil), c(0, kib, nil), r(budget.ErrBytesExhausted)}, 4, kib},
		{"release returns everything but counts", 20, []step{r(nil), rel(0), r(nil), rel(1)}, 2, 0},
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
					r, err = b.Reserve()
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

func TestNilReservation(t *testing.T) {
	var r *budget.Reservation
	if err := r.Commit(1); err != nil {
		t.Errorf("nil Commit() = %v", err)
	}
	r.Release()
}

// TestConcurrent hammers one budget from many goroutines; run it with -race.
// At every observation the counters stay within maxCalls and the byte budget.
func TestConcurrent(t *testing.T) {
	for _, maxCalls := range []int{limits.MinCallsPerRun, limits.DefaultCallsPerRun, limits.MaxCallsPerRun} {
		b, err := budget.NewRunBudget(maxCalls)
		if err != nil {
			t.Fatal(err)
		}
		var granted atomic.Int64
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					st := b.Stats()
					if st.Calls > maxCalls || st.BytesUsed+st.BytesReserved > limits.RunByteBudget || st.BytesReserved < 0 {
						t.Errorf("stats %+v exceed maxCalls %d or the byte budget", st, maxCalls)
						return
					}
					r, err := b.Reserve()
					if err != nil {
						if !errors.Is(err, budget.ErrCallsExhausted) && !errors.Is(err, budget.ErrBytesExhausted) {
							t.Errorf("Reserve() = %v", err)
						}
						continue
					}
					granted.Add(1)
					switch (g + i) % 4 {
					case 0:
						r.Release()
					case 1:
						_ = r.Commit(limits.CallReservation)
						r.Release()
					case 2:
						_ = r.Commit(limits.CallReservation * 2)
					default:
						_ = r.Commit((g * 997) % limits.CallReservation)
						_ = r.Commit(1)
					}
				}
			}()
		}
		wg.Wait()
		st := b.Stats()
		if st.Calls > maxCalls || int(granted.Load()) != st.Calls || st.BytesUsed > limits.RunByteBudget || st.BytesReserved != 0 {
			t.Errorf("maxCalls %d: final stats %+v, granted %d", maxCalls, st, granted.Load())
		}
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
				r, err := b.Reserve()
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
