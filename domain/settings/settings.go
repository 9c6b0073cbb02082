// Package settings holds a tenant's operational settings: how long its
// review data is kept, and whether the prompts of its reviews are kept,
// encrypted, for debugging (and for how long).
package settings

import (
	"errors"
	"fmt"
	"time"

	"github.com/codelotse/codelotse/domain/field"
)

// Bounds and defaults of the settings.
const (
	MinRetentionDays     = 1
	MaxRetentionDays     = 3650
	DefaultRetentionDays = 90

	MinPromptTTLHours     = 1
	MaxPromptTTLHours     = 168
	DefaultPromptTTLHours = 24
)

// The fields this package names in a [field.Error] are JSON paths:
// "retentionDays" and "debugPrompts.ttlHours".

// Settings are a tenant's settings. The zero value is invalid; use [New],
// [Default] or [UnmarshalFromDatabase].
type Settings struct {
	retentionDays int
	debugPrompts  bool
	ttlHours      int
}

// New validates the settings. Every field out of range is reported: the
// error joins one *[field.Error] per field.
func New(retentionDays int, debugPrompts bool, ttlHours int) (Settings, error) {
	var errs []error
	if retentionDays < MinRetentionDays || retentionDays > MaxRetentionDays {
		errs = append(errs, &field.Error{Field: "retentionDays",
			Reason: fmt.Sprintf("must be between %d and %d", MinRetentionDays, MaxRetentionDays)})
	}
	if ttlHours < MinPromptTTLHours || ttlHours > MaxPromptTTLHours {
		errs = append(errs, &field.Error{Field: "debugPrompts.ttlHours",
			Reason: fmt.Sprintf("must be between %d and %d", MinPromptTTLHours, MaxPromptTTLHours)})
	}
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	return Settings{retentionDays: retentionDays, debugPrompts: debugPrompts, ttlHours: ttlHours}, nil
}

// Default are the settings of a new tenant: 90 days, debug prompts off
// with a 24-hour TTL.
func Default() Settings {
	return Settings{retentionDays: DefaultRetentionDays, ttlHours: DefaultPromptTTLHours}
}

// UnmarshalFromDatabase rebuilds stored settings, for adapters only. The
// database's CHECK constraints hold the same bounds; a stored value out of
// range is an error all the same.
func UnmarshalFromDatabase(retentionDays int, debugPrompts bool, ttlHours int) (Settings, error) {
	return New(retentionDays, debugPrompts, ttlHours)
}

// RetentionDays is how many days review runs, tool-call records, prompt
// logs and audit events are kept.
func (s Settings) RetentionDays() int { return s.retentionDays }

// DebugPrompts reports whether the model requests of reviews are kept.
func (s Settings) DebugPrompts() bool { return s.debugPrompts }

// PromptTTL is how long a kept model request lives after it was written.
func (s Settings) PromptTTL() time.Duration { return time.Duration(s.ttlHours) * time.Hour }

// PromptTTLHours is [Settings.PromptTTL] in whole hours.
func (s Settings) PromptTTLHours() int { return s.ttlHours }

// IsZero reports whether s is the invalid zero value.
func (s Settings) IsZero() bool { return s.retentionDays == 0 }
