package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
)

// TestParseURLLimitsTheInputAsWritten: the 2,048-character limit applies
// to the URL as the admin wrote it, not only to its normalised form: an
// input one character too long is refused even when dropping its default
// port would make it fit.
func TestParseURLLimitsTheInputAsWritten(t *testing.T) {
	prefix := "https://example.com:443/"
	in := prefix + strings.Repeat("a", limits.MaxURLLen+1-len(prefix))
	if n := len(in); n != limits.MaxURLLen+1 {
		t.Fatalf("input is %d characters, want %d", n, limits.MaxURLLen+1)
	}
	_, err := server.ParseURL(in)
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "url" || fe.Reason != "must be at most 2048 characters" {
		t.Errorf("ParseURL(%d characters, %d once :443 is dropped) = %v, want the length refusal", len(in), len(in)-4, err)
	}
	if _, err := server.ParseURL(in[:len(in)-1]); err != nil {
		t.Errorf("ParseURL(exactly %d characters) = %v, want it accepted", limits.MaxURLLen, err)
	}
}
