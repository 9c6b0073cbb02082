package budget

// ErrWouldWait is what TryReserve returns where Reserve would wait.
var ErrWouldWait = errWouldWait

// TryReserve is one look of Reserve, without waiting (for the tests).
func (b *RunBudget) TryReserve() (*Reservation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.try()
}

// Waiting is how many callers wait inside Reserve (for the tests).
func (b *RunBudget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}
