package gate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
)

func TestParseEdition(t *testing.T) {
	tests := []struct {
		in   string
		want gate.Edition
		ok   bool
	}{
		{"self-hosted", gate.SelfHosted, true},
		{"enterprise", gate.Enterprise, true},
		{"Enterprise", gate.Edition{}, false},
		{"self_hosted", gate.Edition{}, false},
		{"", gate.Edition{}, false},
		{"enterprise\nlevel=debug", gate.Edition{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := gate.ParseEdition(tt.in)
			if got != tt.want || (err == nil) != tt.ok {
				t.Fatalf("ParseEdition(%q) = %v, %v, want %v ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			if tt.ok && got.String() != tt.in {
				t.Errorf("ParseEdition(%q).String() = %q", tt.in, got)
			}
			if !tt.ok {
				var ie *gate.InvalidValueError
				if !errors.As(err, &ie) || ie.Value != tt.in || strings.Contains(err.Error(), "\n") {
					t.Errorf("ParseEdition(%q) = %q, want a one-line *InvalidValueError", tt.in, err)
				}
			}
		})
	}
}

func TestParseInstance(t *testing.T) {
	tests := []struct {
		in      string
		want    gate.Instance
		allowed bool
		ok      bool
	}{
		{"allowed", gate.InstanceAllowed, true, true},
		{"disabled", gate.InstanceDisabled, false, true},
		{"enabled", gate.Instance{}, false, false},
		{"ALLOWED", gate.Instance{}, false, false},
		{"", gate.Instance{}, false, false},
		{"allowed ", gate.Instance{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := gate.ParseInstance(tt.in)
			if got != tt.want || (err == nil) != tt.ok || got.Allowed() != tt.allowed {
				t.Fatalf("ParseInstance(%q) = %v, %v, want %v ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			if tt.ok && got.String() != tt.in {
				t.Errorf("ParseInstance(%q).String() = %q", tt.in, got)
			}
			if !tt.ok && strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseInstance(%q) error has several lines", tt.in)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		signedOff, allowed bool
		want               error
	}{
		{false, false, gate.ErrNotSignedOff},
		{false, true, gate.ErrNotSignedOff},
		{true, false, gate.ErrInstanceDisabled},
		{true, true, nil},
	}
	for _, tt := range tests {
		if got := gate.Check(tt.signedOff, tt.allowed); got != tt.want {
			t.Errorf("Check(%v, %v) = %v, want %v", tt.signedOff, tt.allowed, got, tt.want)
		}
	}
}

func TestEffectiveMcpContext(t *testing.T) {
	server := "0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"
	effective := func(mode string, servers []string) policy.Effective {
		s, err := policy.NewMcpSection(mode, servers, nil)
		if err != nil {
			t.Fatal(err)
		}
		return policy.Merge(nil, s)
	}
	policies := []struct {
		name string
		p    policy.Effective
		on   bool // mode on with at least one server
	}{
		{"on with server", effective("on", []string{server}), true},
		{"on without server", effective("on", nil), false},
		{"off with server", effective("off", []string{server}), false},
		{"inherit nothing", effective("inherit", []string{server}), false},
		{"zero", policy.Effective{}, false},
	}
	visibilities := []struct {
		v    policy.Visibility
		safe bool
	}{
		{policy.VisibilityPrivate, true},
		{policy.VisibilityInternal, true},
		{policy.VisibilityPublic, false},
		{policy.Visibility{}, false},
	}
	type row struct {
		p                  int
		v                  int
		signedOff, allowed bool
		want               bool
	}
	var tests []row
	for pi, p := range policies {
		for vi, v := range visibilities {
			for _, signedOff := range []bool{false, true} {
				for _, allowed := range []bool{false, true} {
					tests = append(tests, row{pi, vi, signedOff, allowed, p.on && v.safe && signedOff && allowed})
				}
			}
		}
	}
	if len(tests) != len(policies)*len(visibilities)*4 {
		t.Fatalf("table has %d rows", len(tests))
	}
	wantOn := 0
	for _, tt := range tests {
		p, v := policies[tt.p], visibilities[tt.v]
		name := fmt.Sprintf("%s/%q/signedOff=%v/allowed=%v", p.name, v.v, tt.signedOff, tt.allowed)
		t.Run(name, func(t *testing.T) {
			if got := gate.EffectiveMcpContext(p.p, v.v, tt.signedOff, tt.allowed); got != tt.want {
				t.Errorf("EffectiveMcpContext(%s) = %v, want %v", name, got, tt.want)
			}
		})
		if tt.want {
			wantOn++
		}
	}
	// Exactly two combinations are on: a usable policy on a private or internal repository, signed off and allowed.
	if wantOn != 2 {
		t.Errorf("%d combinations are on, want 2", wantOn)
	}
}

func TestSignedOffConstant(t *testing.T) {
	t.Logf("SignedOff = %v", gate.SignedOff)
	if gate.Check(gate.SignedOff, true) == nil != gate.SignedOff {
		t.Errorf("Check(SignedOff=%v, true) disagrees with the constant", gate.SignedOff)
	}
}
