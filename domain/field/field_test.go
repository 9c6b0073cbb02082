package field_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
)

func TestErrorNamesFieldAndReason(t *testing.T) {
	err := fmt.Errorf("create: %w", &field.Error{Field: "url", Reason: "must be https"})
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "url" || fe.Reason != "must be https" {
		t.Fatalf("errors.As(%v) = %+v, want the wrapped field error", err, fe)
	}
	if got, want := fe.Error(), "url: must be https"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
