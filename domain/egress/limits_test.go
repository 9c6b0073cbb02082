package egress

import (
	"fmt"
	"math/rand/v2"
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

// TestConcurrentCallsAreJudgedInTurn: the calls of one model turn run at
// once; each must see what the others sent, so of four 9-character pieces
// of one value sent together, exactly one leaves.
func TestConcurrentCallsAreJudgedInTurn(t *testing.T) {
	const key = "ghp_4Rk9yXb2LmQ7sT1vW3zA8nC6dE0fG5hJ2kL9"
	for round := 0; round < 20000; round++ {
		tk := NewTaint()
		tk.Add(key)
		start := make(chan struct{})
		results := make(chan bool, 4)
		for i := 0; i < 4; i++ {
			go func() {
				<-start
				results <- check(tk, key[4+9*i:13+9*i])
			}()
		}
		close(start)
		admitted := 0
		for i := 0; i < 4; i++ {
			if <-results {
				admitted++
			}
		}
		if admitted != 1 {
			t.Fatalf("round %d: %d of 4 concurrent pieces admitted, want 1", round, admitted)
		}
	}
}

// TestATaintOfTooManyBytesAdmitsNothing: fewer values than MaxValues,
// but more folded characters than MaxTaintBytes: the run sends nothing
// more.
func TestATaintOfTooManyBytesAdmitsNothing(t *testing.T) {
	tk := NewTaint()
	r := rand.New(rand.NewPCG(1, 2))
	long := func(int) string {
		b := make([]byte, MaxValueLen)
		for j := range b {
			b[j] = "abcdefghjkmnpqrstuvwxyz23456789"[r.IntN(31)]
		}
		return string(b)
	}
	for i := 0; i < MaxTaintBytes/MaxValueLen; i++ {
		tk.Add(long(i))
	}
	if !check(tk, "cache invalidation") {
		t.Fatalf("a taint of exactly %d bytes (%d values) refused an ordinary term", MaxTaintBytes, tk.Len())
	}
	tk.Add(long(1000))
	if check(tk, "cache invalidation") {
		t.Errorf("a taint over %d bytes (%d values) admitted a call", MaxTaintBytes, tk.Len())
	}
}

// TestChains: runs of a value in its order with up to MaxFiller
// characters between them are one piece; a wider gap breaks the chain.
func TestChains(t *testing.T) {
	const key = "ghp_4Rk9yXb2LmQ7sT1vW3zA8nC6dE0fG5hJ2kL9"
	r := key[4:]
	tests := []struct {
		name    string
		arg     string
		blocked bool
	}{
		{"runs of 4, one filler", r[0:4] + "q" + r[4:8] + "q" + r[8:12], true},
		{"runs of 4, fillers of 3", r[0:4] + "qzx" + r[4:8] + "qzx" + r[8:12], true},
		{"a run of 4, then runs of 2 and 3", r[0:4] + "q" + r[4:6] + "zx" + r[6:9] + "k" + r[9:12], true},
		{"runs of 3 only (under Link)", r[0:3] + "uuu" + r[3:6] + "uuu" + r[6:9] + "uuu" + r[9:12], false},
		{"runs of 5, fillers of 4", r[0:5] + "word" + r[5:10], false},
		{"runs of 5, a word of 3 between", r[0:5] + " and " + r[5:10], true},
		{"runs of 5, a word of 4 between", r[0:5] + " then " + r[5:10], false},
		{"runs out of the value's order", r[5:10] + "q" + r[0:5], false},
	}
	for _, tt := range tests {
		tk := NewTaint()
		tk.Add(key)
		if got := !check(tk, tt.arg); got != tt.blocked {
			t.Errorf("%s (%q): blocked %t, want %t", tt.name, tt.arg, got, tt.blocked)
		}
	}
}
