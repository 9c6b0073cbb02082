package server_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
)

// TestParseCallLimit: maxCallsPerMinute is null (no limit) or 1 to 600;
// anything else is a field error on maxCallsPerMinute.
func TestParseCallLimit(t *testing.T) {
	tests := []struct {
		name string
		in   *int
		want int // 0: no limit
		bad  bool
	}{
		{"null", nil, 0, false},
		{"one", ptr(1), 1, false},
		{"the most", ptr(limits.MaxCallsPerMinute), 600, false},
		{"zero", ptr(0), 0, true},
		{"negative", ptr(-1), 0, true},
		{"one above the most", ptr(601), 0, true},
		{"far above", ptr(1 << 40), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := server.ParseCallLimit(tt.in)
			if tt.bad {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != "maxCallsPerMinute" {
					t.Fatalf("ParseCallLimit() = %v, want a maxCallsPerMinute field error", err)
				}
				if l != server.NoCallLimit() {
					t.Errorf("a refused limit is %v, want none", l)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCallLimit() = %v", err)
			}
			if n, ok := l.PerMinute(); n != tt.want || ok != (tt.want > 0) {
				t.Errorf("PerMinute() = %d, %v; want %d", n, ok, tt.want)
			}
		})
	}
}

// TestCallCap: the instance's cap is 1 to 600 (600 unset); a limit above
// it is refused on maxCallsPerMinute, one at it is not, and a call is
// held to the lower of the two.
func TestCallCap(t *testing.T) {
	for _, bad := range []int{0, -1, 601} {
		if _, err := server.ParseCallCap(bad); err == nil {
			t.Errorf("ParseCallCap(%d) = nil error", bad)
		}
	}
	if got := (server.CallCap{}).PerMinute(); got != limits.MaxCallsPerMinute {
		t.Errorf("the zero cap = %d, want %d", got, limits.MaxCallsPerMinute)
	}
	c, err := server.ParseCallCap(100)
	if err != nil || c.PerMinute() != 100 {
		t.Fatalf("ParseCallCap(100) = %v, %v", c.PerMinute(), err)
	}
	limit := func(n int) server.CallLimit {
		t.Helper()
		l, err := server.ParseCallLimit(&n)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tt := range []struct {
		name      string
		l         server.CallLimit
		refused   bool
		effective int // 0: not counted
	}{
		{"none", server.NoCallLimit(), false, 0},
		{"below the cap", limit(7), false, 7},
		{"the cap", limit(100), false, 100},
		{"above the cap", limit(101), true, 100},
		{"the most, above the cap", limit(600), true, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Check(tt.l)
			var fe *field.Error
			if tt.refused != (err != nil) || err != nil && (!errors.As(err, &fe) || fe.Field != "maxCallsPerMinute") {
				t.Errorf("Check() = %v, want refused %v on maxCallsPerMinute", err, tt.refused)
			}
			if n, ok := c.Effective(tt.l); n != tt.effective || ok != (tt.effective > 0) {
				t.Errorf("Effective() = %d, %v; want %d", n, ok, tt.effective)
			}
		})
	}
	// The default cap admits the most a server may have.
	if err := (server.CallCap{}).Check(limit(600)); err != nil {
		t.Errorf("the default cap refuses 600: %v", err)
	}
}

// TestApplyCallLimit: a patch sets, changes and removes the limit,
// naming maxCallsPerMinute among the changed fields; the same limit is
// no change. A new server has none.
func TestApplyCallLimit(t *testing.T) {
	s := newServer(t, mustBearer(t, "token-abcdefghwxyz"), 0)
	if _, ok := s.MaxCallsPerMinute().PerMinute(); ok {
		t.Fatal("a new server has a calls-per-minute limit")
	}
	ten, _ := server.ParseCallLimit(ptr(10))
	none := server.NoCallLimit()
	steps := []struct {
		patch   server.Patch
		want    int
		changed []string
	}{
		{server.Patch{MaxCallsPerMinute: &ten}, 10, []string{"maxCallsPerMinute"}},
		{server.Patch{MaxCallsPerMinute: &ten}, 10, nil},
		{server.Patch{}, 10, nil},
		{server.Patch{Enabled: ptr(false), MaxCallsPerMinute: &none}, 0, []string{"enabled", "maxCallsPerMinute"}},
		{server.Patch{MaxCallsPerMinute: &none}, 0, nil},
	}
	at := t1
	for i, st := range steps {
		at = at.Add(time.Minute)
		changed, err := s.Apply(st.patch, at)
		if err != nil {
			t.Fatalf("step %d: Apply() = %v", i, err)
		}
		if n, _ := s.MaxCallsPerMinute().PerMinute(); n != st.want || !slices.Equal(changed, st.changed) {
			t.Errorf("step %d: limit %d, changed %v; want %d, %v", i, n, changed, st.want, st.changed)
		}
		if moved := s.UpdatedAt().Equal(at); moved != (len(st.changed) > 0) {
			t.Errorf("step %d: updatedAt moved %v, want %v", i, moved, len(st.changed) > 0)
		}
	}
}

// TestUnmarshalCallLimit: a stored limit loads (0 is none); one out of
// range is an error, not a server.
func TestUnmarshalCallLimit(t *testing.T) {
	load := func(n int) (*server.Server, error) {
		return server.UnmarshalServerFromDatabase(serverID, tenantID, "wiki", "https://wiki.example.com/mcp", true,
			"none", "", server.OAuthView{}, t0, time.Time{}, "", n, nil, t0, t0)
	}
	for _, n := range []int{0, 1, 600} {
		s, err := load(n)
		if err != nil {
			t.Fatalf("load(%d) = %v", n, err)
		}
		if got, ok := s.MaxCallsPerMinute().PerMinute(); got != n || ok != (n > 0) {
			t.Errorf("load(%d): limit %d, %v", n, got, ok)
		}
	}
	for _, n := range []int{-1, 601} {
		if _, err := load(n); err == nil {
			t.Errorf("load(%d) = nil error", n)
		}
	}
}
