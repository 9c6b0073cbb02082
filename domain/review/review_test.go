package review

import "testing"

func TestRunStatusTransitions(t *testing.T) {
	for _, tt := range []struct {
		s                         RunStatus
		canStart, finished, valid bool
	}{
		{Queued, true, false, true},
		{Running, true, false, true},
		{Done, false, true, true},
		{Failed, false, true, true},
		{"", false, false, false},
		{"cancelled", false, false, false},
		{"Done", false, false, false},
	} {
		if got := tt.s.Valid(); got != tt.valid {
			t.Errorf("%q.Valid() = %v, want %v", tt.s, got, tt.valid)
		}
		if got := tt.s.CanStart(); got != tt.canStart {
			t.Errorf("%q.CanStart() = %v, want %v", tt.s, got, tt.canStart)
		}
		if got := tt.s.Finished(); got != tt.finished {
			t.Errorf("%q.Finished() = %v, want %v", tt.s, got, tt.finished)
		}
	}
	if n := len(RunStatuses()); n != 4 {
		t.Errorf("RunStatuses() has %d states, want 4", n)
	}
}

func TestCallStatusesAreAClosedSet(t *testing.T) {
	want := []string{"ok", "error", "blocked", "too_large", "unavailable", "budget_exhausted", "invalid_arguments", "rate_limited"}
	got := CallStatuses()
	if len(got) != len(want) {
		t.Fatalf("CallStatuses() = %v, want %v", got, want)
	}
	for i, s := range got {
		if string(s) != want[i] || !s.Valid() {
			t.Errorf("CallStatuses()[%d] = %q (valid %v), want %q", i, s, s.Valid(), want[i])
		}
	}
	for _, s := range []CallStatus{"", "OK", "timeout", "ok "} {
		if s.Valid() {
			t.Errorf("%q.Valid() = true", s)
		}
	}
}

func TestProves(t *testing.T) {
	diff, file := "+\tcache.Set(key, value)\n", "package cache\n\nfunc Set() {}\n"
	for _, tt := range []struct {
		evidence string
		want     bool
	}{
		{"cache.Set(key, value)", true},
		{"  cache.Set(key  ", true}, // trimmed, 13 characters
		{"func Set() {}", true},     // in a file
		{"cache.Get(key)", false},   // not there
		{"cache.S", false},          // 7 characters: too short to prove anything
		{"+", false},
		{"        ", false},
	} {
		if got := Proves(tt.evidence, diff, file); got != tt.want {
			t.Errorf("Proves(%q) = %v, want %v", tt.evidence, got, tt.want)
		}
	}
	if Proves("cache.Set(key, value)") {
		t.Error("evidence proves something without any source")
	}
}
