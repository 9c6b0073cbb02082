package egress

import (
	"fmt"
	"testing"
)

// TestATaintThatOverflowsAdmitsNothing: a run that has seen more values
// than the taint keeps sends nothing more (fail closed), not even an
// ordinary term.
func TestATaintThatOverflowsAdmitsNothing(t *testing.T) {
	tk := NewTaint()
	for i := 0; i < MaxValues; i++ {
		tk.Add(fmt.Sprintf("k%08dvalue", i))
	}
	if tk.Len() != MaxValues || !check(tk, "cache invalidation") {
		t.Fatalf("a full taint of %d values refused an ordinary term", tk.Len())
	}
	tk.Add("one-value-too-many-2026")
	if tk.Len() != MaxValues || check(tk, "cache invalidation") {
		t.Errorf("an overflowed taint (%d values) admitted a call", tk.Len())
	}
}

// TestShortValuesAreNotKept: a value that folds to fewer than MinValue
// characters cannot be told from ordinary words and is not kept; one of
// MinValue is, and must be sent whole to be blocked.
func TestShortValuesAreNotKept(t *testing.T) {
	tk := NewTaint()
	if n := tk.Add("ab-12-cd-34", "x1y2z3w"); n != 1 {
		t.Fatalf("Add kept %d values, want 1 (the 8-character one)", n)
	}
	if !check(tk, "ab12cd") || check(tk, "AB 12 CD 34") {
		t.Error("an 8-character value: want its 6-character piece admitted and the whole blocked")
	}
}

// TestPiecesCountAcrossTheRun: the pieces of a value that earlier calls
// sent count for a later call even when those calls have long left the
// history that is read again (so history alone does not block it).
func TestPiecesCountAcrossTheRun(t *testing.T) {
	const key = "ghp_4Rk9yXb2LmQ7sT1vW3zA8nC6dE0fG5hJ2kL9"
	tk := NewTaint()
	tk.Add(key)
	if !check(tk, "about "+key[4:13]) {
		t.Fatal("the first nine characters were refused")
	}
	for i := 0; i < 4; i++ { // 4 × 100 bytes: the first piece leaves the history
		if !check(tk, fmt.Sprintf("%-100s", fmt.Sprintf("ordinary search number %d about the cache", i))) {
			t.Fatalf("ordinary call %d refused", i)
		}
	}
	if check(tk, "then "+key[20:29]) {
		t.Error("nine more characters of the same value admitted: the run's earlier piece was not counted")
	}
}
