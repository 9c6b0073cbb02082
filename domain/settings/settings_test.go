package settings_test

import (
	"errors"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/settings"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		days, ttl  int
		wantFields []string
	}{
		{name: "lowest", days: 1, ttl: 1},
		{name: "highest", days: 3650, ttl: 168},
		{name: "zero days", days: 0, ttl: 24, wantFields: []string{"retentionDays"}},
		{name: "too many days", days: 3651, ttl: 24, wantFields: []string{"retentionDays"}},
		{name: "zero ttl", days: 90, ttl: 0, wantFields: []string{"debugPrompts.ttlHours"}},
		{name: "ttl over a week", days: 90, ttl: 169, wantFields: []string{"debugPrompts.ttlHours"}},
		{name: "both", days: -1, ttl: 1000, wantFields: []string{"retentionDays", "debugPrompts.ttlHours"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := settings.New(tt.days, true, tt.ttl)
			var got []string
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					var fe *field.Error
					if !errors.As(e, &fe) {
						t.Fatalf("New(%d, %d): error %v is not a field.Error", tt.days, tt.ttl, e)
					}
					got = append(got, fe.Field)
				}
			} else if err != nil {
				t.Fatalf("New(%d, %d) = %v, not a joined error", tt.days, tt.ttl, err)
			}
			if len(got) != len(tt.wantFields) {
				t.Fatalf("New(%d, %d) fields %v, want %v", tt.days, tt.ttl, got, tt.wantFields)
			}
			for i := range got {
				if got[i] != tt.wantFields[i] {
					t.Errorf("New(%d, %d) fields %v, want %v", tt.days, tt.ttl, got, tt.wantFields)
				}
			}
			if err == nil && (s.RetentionDays() != tt.days || s.PromptTTL() != time.Duration(tt.ttl)*time.Hour || !s.DebugPrompts()) {
				t.Errorf("New(%d, true, %d) = %+v", tt.days, tt.ttl, s)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	d := settings.Default()
	if d.RetentionDays() != 90 || d.DebugPrompts() || d.PromptTTLHours() != 24 || d.IsZero() {
		t.Errorf("Default() = %d days, debug %v, ttl %d h", d.RetentionDays(), d.DebugPrompts(), d.PromptTTLHours())
	}
	if !(settings.Settings{}).IsZero() {
		t.Error("the zero Settings is not IsZero")
	}
}
