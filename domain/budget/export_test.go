package budget

// Waiting is how many callers wait inside Reserve (for the tests).
func (b *RunBudget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}
