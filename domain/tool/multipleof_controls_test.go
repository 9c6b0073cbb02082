package tool_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

// TestMultipleOfInFloatingPoint: a number literal longer than 40
// characters, or with an exponent of four digits or more, is divided in
// floating point (rule.go, maxExactLiteral), so that a hostile literal
// cannot make a huge rational. That path refuses a non-multiple too, and
// what it accepts is the float64 value's verdict:
//
//   - 1.25 written with 42 characters is refused (1.25 / 0.5 = 2.5);
//   - 1.5 written with 45 characters is accepted;
//   - a literal that differs from a multiple only past float64's
//     precision (1.5 and 10^-40) is accepted: it is read as 1.5, while the
//     same difference in 40 characters is divided exactly and refused;
//   - a negative exponent of four digits underflows to 0, a multiple of
//     everything, and is accepted (1.25e-1000 is 0 in float64, as the
//     seed 1e-99999 of TestFlatScalarKeywords);
//   - a positive one is out of range, refused before any keyword;
//   - a literal of four-digit exponent that is a finite number is long
//     (over 1,000 characters): 1.25 and 1.5 written so.
func TestMultipleOfInFloatingPoint(t *testing.T) {
	const notMultiple = "not a multiple of 0.5"
	long125 := "1.25" + strings.Repeat("0", 37) + "1" // 1.25 and 10^-40
	long15 := "1.5" + strings.Repeat("0", 42)
	past15 := "1.5" + strings.Repeat("0", 38) + "1"  // 1.5 and 10^-40
	exact15 := "1.5" + strings.Repeat("0", 36) + "1" // 1.5 and 10^-38, 40 characters
	exp125 := "0." + strings.Repeat("0", 999) + "125e1000"
	exp15 := "0." + strings.Repeat("0", 999) + "15e1000"
	for lit, want := range map[string]int{long125: 42, long15: 45, past15: 42, exact15: 40} {
		if len(lit) != want {
			t.Fatalf("%s has %d characters, want %d", lit, len(lit), want)
		}
	}
	for lit, want := range map[string]float64{exp125: 1.25, exp15: 1.5} {
		if f, err := strconv.ParseFloat(lit, 64); err != nil || f != want {
			t.Fatalf("%.20s…e1000 is %v, %v; want %v", lit, f, err, want)
		}
	}
	tests := []struct {
		value, reason string
	}{
		{long125, notMultiple},
		{"-" + long125, notMultiple},
		{long15, ""},
		{"-" + long15, ""},
		{past15, ""},
		{exact15, notMultiple},
		{"1.25e-1000", ""},
		{"-1.25E-1000", ""},
		{exp125, notMultiple},
		{exp15, ""},
	}
	s, err := tool.CheckSchema(json.RawMessage(`{"type":"object","properties":{"x":{"type":"number","multipleOf":0.5}}}`))
	if err != nil {
		t.Fatalf("CheckSchema: %v", err)
	}
	for _, tt := range tests {
		args := `{"x": ` + tt.value + `}`
		err := s.Validate(json.RawMessage(args))
		var ae *tool.ArgumentError
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("Validate(%.60s) = %v, want valid", args, err)
		case tt.reason != "" && (!errors.As(err, &ae) || ae.Field != "x" || ae.Reason != tt.reason):
			t.Errorf("Validate(%.60s) = %v, want x: %s", args, err, tt.reason)
		}
	}
	if err := s.Validate(json.RawMessage(`{"x": 1.25e1000}`)); err == nil {
		t.Error("Validate(1.25e1000) = valid, want refused (out of range)")
	}
}
