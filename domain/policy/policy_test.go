package policy_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/policy"
)

const (
	s1 = "0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"
	s2 = "5f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e"
	s3 = "11111111-2222-4333-8444-555555555555"
	s4 = "21111111-2222-4333-8444-555555555555"
	s5 = "31111111-2222-4333-8444-555555555555"
	s6 = "41111111-2222-4333-8444-555555555555"
)

func ptr(i int) *int { return &i }

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want policy.Mode
		ok   bool
	}{
		{"on", policy.ModeOn, true},
		{"off", policy.ModeOff, true},
		{"inherit", policy.ModeInherit, true},
		{"ON", policy.Mode{}, false},
		{"", policy.Mode{}, false},
		{"true", policy.Mode{}, false},
		{"on ", policy.Mode{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := policy.ParseMode(tt.in)
			if got != tt.want || (err == nil) != tt.ok || got.IsZero() == tt.ok {
				t.Errorf("ParseMode(%q) = %v, %v, want %v ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			if tt.ok && got.String() != tt.in {
				t.Errorf("ParseMode(%q).String() = %q", tt.in, got)
			}
		})
	}
}

func TestParseVisibility(t *testing.T) {
	tests := []struct {
		in   string
		want policy.Visibility
		ok   bool
	}{
		{"private", policy.VisibilityPrivate, true},
		{"internal", policy.VisibilityInternal, true},
		{"public", policy.VisibilityPublic, true},
		{"Public", policy.Visibility{}, false},
		{"", policy.Visibility{}, false},
		{"secret", policy.Visibility{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := policy.ParseVisibility(tt.in)
			if got != tt.want || (err == nil) != tt.ok || got.IsZero() == tt.ok {
				t.Errorf("ParseVisibility(%q) = %v, %v, want %v ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			var fe *field.Error
			if !tt.ok && (!errors.As(err, &fe) || fe.Field != "visibility" || err.Error() != "visibility: must be private, internal or public") {
				t.Errorf("ParseVisibility(%q) = %v, want a visibility field error", tt.in, err)
			}
			if tt.ok && got.String() != tt.in {
				t.Errorf("ParseVisibility(%q).String() = %q", tt.in, got)
			}
		})
	}
}

func fields(err error) []string {
	var out []string
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	for _, e := range errs {
		var fe *field.Error
		if errors.As(e, &fe) {
			out = append(out, fe.Field)
		} else {
			out = append(out, "?")
		}
	}
	return out
}

func TestNewMcpSection(t *testing.T) {
	tests := []struct {
		name        string
		mode        string
		servers     []string
		maxCalls    *int
		wantFields  []string
		wantServers []string
		wantCalls   int
	}{
		{name: "on", mode: "on", servers: []string{s1, s2}, maxCalls: ptr(7), wantServers: []string{s1, s2}, wantCalls: 7},
		{name: "default calls", mode: "inherit", wantServers: []string{}, wantCalls: limits.DefaultCallsPerRun},
		{name: "min calls", mode: "off", maxCalls: ptr(limits.MinCallsPerRun), wantServers: []string{}, wantCalls: limits.MinCallsPerRun},
		{name: "max calls", mode: "on", maxCalls: ptr(limits.MaxCallsPerRun), wantServers: []string{}, wantCalls: limits.MaxCallsPerRun},
		{name: "five servers", mode: "on", servers: []string{s1, s2, s3, s4, s5}, wantServers: []string{s1, s2, s3, s4, s5}, wantCalls: limits.DefaultCallsPerRun},
		{name: "uppercase ids lowered", mode: "on", servers: []string{"0B6E6F6A-8F3C-4A47-9D0E-2F5C1D7A9B10"}, wantServers: []string{s1}, wantCalls: limits.DefaultCallsPerRun},
		{name: "six servers", mode: "on", servers: []string{s1, s2, s3, s4, s5, s6}, wantFields: []string{"servers"}},
		{name: "duplicate", mode: "on", servers: []string{s1, s1}, wantFields: []string{"servers"}},
		{name: "duplicate by case", mode: "on", servers: []string{s1, "0B6E6F6A-8F3C-4A47-9D0E-2F5C1D7A9B10"}, wantFields: []string{"servers"}},
		{name: "not a uuid", mode: "on", servers: []string{"wiki"}, wantFields: []string{"servers"}},
		{name: "uuid without dashes", mode: "on", servers: []string{"0b6e6f6a08f3c04a4709d0e02f5c1d7a9b10"}, wantFields: []string{"servers"}},
		{name: "uuid braces", mode: "on", servers: []string{"{0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b1}"}, wantFields: []string{"servers"}},
		{name: "uuid junk", mode: "on", servers: []string{"0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9bzz"}, wantFields: []string{"servers"}},
		{name: "empty id", mode: "on", servers: []string{""}, wantFields: []string{"servers"}},
		{name: "zero calls", mode: "on", maxCalls: ptr(0), wantFields: []string{"maxCalls"}},
		{name: "too many calls", mode: "on", maxCalls: ptr(limits.MaxCallsPerRun + 1), wantFields: []string{"maxCalls"}},
		{name: "negative calls", mode: "on", maxCalls: ptr(-1), wantFields: []string{"maxCalls"}},
		{name: "bad mode", mode: "yes", wantFields: []string{"mode"}},
		{name: "everything bad", mode: "", servers: []string{"x"}, maxCalls: ptr(99), wantFields: []string{"mode", "servers", "maxCalls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policy.NewMcpSection(tt.mode, tt.servers, tt.maxCalls)
			if f := fields(err); !slices.Equal(f, tt.wantFields) {
				t.Fatalf("NewMcpSection(%q, %q, %v) = %v (fields %v), want fields %v", tt.mode, tt.servers, tt.maxCalls, err, f, tt.wantFields)
			}
			if err != nil {
				return
			}
			if got.Mode().String() != tt.mode || !slices.Equal(got.Servers(), tt.wantServers) || got.MaxCalls() != tt.wantCalls {
				t.Errorf("NewMcpSection(%q, %q, %v) = %v %q %d, want %q %d", tt.mode, tt.servers, tt.maxCalls, got.Mode(), got.Servers(), got.MaxCalls(), tt.wantServers, tt.wantCalls)
			}
		})
	}
}

func TestSectionIsCopied(t *testing.T) {
	in := []string{s1}
	s, err := policy.NewMcpSection("on", in, nil)
	if err != nil {
		t.Fatal(err)
	}
	in[0] = s2
	s.Servers()[0] = s3
	if got := s.Servers(); got[0] != s1 {
		t.Errorf("Servers() = %q, want [%s]", got, s1)
	}
}

func TestUnmarshalMcpSectionFromDatabase(t *testing.T) {
	s, err := policy.UnmarshalMcpSectionFromDatabase("on", []string{s1, s2, s3, s4, s5, s6}, 30)
	if err != nil || len(s.Servers()) != 6 || s.MaxCalls() != 30 || s.Mode() != policy.ModeOn {
		t.Errorf("UnmarshalMcpSectionFromDatabase() = %v %q %d, %v", s.Mode(), s.Servers(), s.MaxCalls(), err)
	}
	if _, err := policy.UnmarshalMcpSectionFromDatabase("maybe", nil, 5); err == nil {
		t.Errorf("UnmarshalMcpSectionFromDatabase(%q) = nil error", "maybe")
	}
}

func TestMerge(t *testing.T) {
	must := func(mode string, servers []string, calls int) *policy.McpSection {
		s, err := policy.NewMcpSection(mode, servers, &calls)
		if err != nil {
			t.Fatal(err)
		}
		return &s
	}
	tenantOn := must("on", []string{s1, s2}, 3)
	tenantOff := must("off", []string{s1}, 4)
	tenantInherit := must("inherit", []string{s1}, 6)
	tests := []struct {
		name        string
		tenant      *policy.McpSection
		repo        policy.McpSection
		wantMode    policy.Mode
		wantServers []string
		wantCalls   int
		wantSource  policy.Source
	}{
		{"repo on over tenant on", tenantOn, *must("on", []string{s3}, 9), policy.ModeOn, []string{s3}, 9, policy.SourceRepository},
		{"repo on over tenant off", tenantOff, *must("on", []string{s3}, 9), policy.ModeOn, []string{s3}, 9, policy.SourceRepository},
		{"repo on without tenant", nil, *must("on", []string{s3}, 9), policy.ModeOn, []string{s3}, 9, policy.SourceRepository},
		{"repo on without servers", tenantOn, *must("on", nil, 9), policy.ModeOn, []string{}, 9, policy.SourceRepository},
		{"repo off over tenant on", tenantOn, *must("off", []string{s3}, 2), policy.ModeOff, []string{s3}, 2, policy.SourceRepository},
		{"repo inherit tenant on", tenantOn, *must("inherit", []string{s3}, 2), policy.ModeOn, []string{s1, s2}, 3, policy.SourceTenant},
		{"repo inherit tenant off", tenantOff, *must("inherit", []string{s3}, 2), policy.ModeOff, []string{s1}, 4, policy.SourceTenant},
		{"repo inherit tenant inherit", tenantInherit, *must("inherit", nil, 2), policy.ModeOff, []string{s1}, 6, policy.SourceTenant},
		{"repo inherit no tenant", nil, *must("inherit", []string{s3}, 2), policy.ModeOff, []string{}, limits.DefaultCallsPerRun, policy.SourceTenant},
		{"no repo section tenant on", tenantOn, policy.McpSection{}, policy.ModeOn, []string{s1, s2}, 3, policy.SourceTenant},
		{"no repo section no tenant", nil, policy.McpSection{}, policy.ModeOff, []string{}, limits.DefaultCallsPerRun, policy.SourceTenant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy.Merge(tt.tenant, tt.repo)
			if got.Mode() != tt.wantMode || !slices.Equal(got.Servers(), tt.wantServers) || got.MaxCalls() != tt.wantCalls || got.Source() != tt.wantSource {
				t.Errorf("Merge() = %v %q %d %v, want %v %q %d %v", got.Mode(), got.Servers(), got.MaxCalls(), got.Source(),
					tt.wantMode, tt.wantServers, tt.wantCalls, tt.wantSource)
			}
			if got.Servers() == nil || got.Source().String() == "" {
				t.Errorf("Merge() servers nil or source empty")
			}
		})
	}
}

func TestEffectiveExisting(t *testing.T) {
	a, b := "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	s, err := policy.NewMcpSection("on", []string{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eff := policy.Merge(nil, s)
	got := eff.Existing(map[string]bool{b: true})
	if ids := got.Servers(); len(ids) != 1 || ids[0] != b {
		t.Errorf("Existing({b}) servers = %v, want [b]", ids)
	}
	if none := eff.Existing(nil).Servers(); len(none) != 0 {
		t.Errorf("Existing(nil) servers = %v, want none", none)
	}
	if len(eff.Servers()) != 2 || got.Mode() != policy.ModeOn || got.MaxCalls() != eff.MaxCalls() || got.Source() != eff.Source() {
		t.Errorf("Existing changed more than the servers: %v → %v", eff, got)
	}
}
