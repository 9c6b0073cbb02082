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
