package tool_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
)

const validateSchema = `{"type":"object","properties":{
	"q":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},
	"b":{"type":"boolean"},"e":{"type":"string","enum":["open","closed"]}},
	"required":["q"]}`

var tooLong = "longer than " + strconv.Itoa(limits.MaxArgumentStringLen) + " characters"

func TestValidate(t *testing.T) {
	s, err := tool.CheckSchema(json.RawMessage(validateSchema))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", limits.MaxArgumentStringLen)
	runes := strings.Repeat("é", limits.MaxArgumentStringLen)
	tests := []struct {
		name      string
		args      string
		wantField string
		wantErr   string // "" for valid
	}{
		{"only required", `{"q":"cache"}`, "", ""},
		{"all", `{"q":"x","n":-1.5e3,"i":3,"b":true,"e":"open"}`, "", ""},
		{"integral float", `{"q":"x","i":3.0}`, "", ""},
		{"integral exponent", `{"q":"x","i":1e3}`, "", ""},
		{"negative zero", `{"q":"x","i":-0}`, "", ""},
		{"max length ascii", `{"q":"` + long + `"}`, "", ""},
		{"max length runes", `{"q":"` + runes + `"}`, "", ""},
		{"escapes count after decoding", `{"q":"` + strings.Repeat(`\u0041`, limits.MaxArgumentStringLen) + `"}`, "", ""},
		{"whitespace", " {\n\"q\" : \"x\" } ", "", ""},
		{"too long", `{"q":"` + long + `a"}`, "q", tooLong},
		{"too long runes", `{"q":"` + runes + `é"}`, "q", tooLong},
		{"missing required", `{}`, "q", "required"},
		{"null required", `{"q":null}`, "q", "must be a string"},
		{"unknown key", `{"q":"x","AKIAIOSFODNN7EXAMPLE":"secret"}`, "", "unknown argument"},
		{"case differs", `{"Q":"x"}`, "", "unknown argument"},
		{"duplicate", `{"q":"x","q":"y"}`, "", "duplicate argument"},
		{"duplicate via escape", `{"q":"x","\u0071":"y"}`, "", "duplicate argument"},
		{"not object", `["q"]`, "", "must be a JSON object"},
		{"null", `null`, "", "must be a JSON object"},
		{"string", `"{\"q\":\"x\"}"`, "", "must be a JSON object"},
		{"empty", ``, "", "not valid JSON"},
		{"trailing", `{"q":"x"}{}`, "", "not valid JSON"},
		{"invalid utf8", "{\"q\":\"\xff\"}", "", "not valid JSON"},
		{"overflow", `{"q":"x","n":1e400}`, "", "not valid JSON"},
		{"too deep", `{"q":"x","n":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "", "not valid JSON"},
		{"number as string", `{"q":"x","n":"1"}`, "n", "must be a number"},
		{"integer fraction", `{"q":"x","i":3.5}`, "i", "must be an integer"},
		{"integer as string", `{"q":"x","i":"3"}`, "i", "must be an integer"},
		{"bool as string", `{"q":"x","b":"true"}`, "b", "must be a boolean"},
		{"bool as number", `{"q":"x","b":1}`, "b", "must be a boolean"},
		{"string as number", `{"q":1}`, "q", "must be a string"},
		{"string as object", `{"q":{"a":1}}`, "q", "must be a string"},
		{"string as array", `{"q":["a"]}`, "q", "must be a string"},
		{"enum miss", `{"q":"x","e":"Open"}`, "e", "not one of the allowed values"},
		{"enum null", `{"q":"x","e":null}`, "e", "must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate(json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Validate(%q) = %v, want nil", tt.args, err)
				}
				return
			}
			var ae *tool.ArgumentError
			if !errors.As(err, &ae) || ae.Field != tt.wantField || ae.Reason != tt.wantErr {
				t.Errorf("Validate(%q) = %#v, want field %q reason %q", tt.args, err, tt.wantField, tt.wantErr)
				return
			}
			// Never an argument value in the message.
			for _, leak := range []string{"cache", "AKIA", "secret", "Open", long} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("Validate(%q) error %q leaks %q", tt.args, err, leak)
				}
			}
		})
	}
}

func TestValidateZeroSchema(t *testing.T) {
	var s tool.Schema
	tests := []struct {
		args string
		ok   bool
	}{
		{`{}`, true},
		{`{"a":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			if err := s.Validate(json.RawMessage(tt.args)); (err == nil) != tt.ok {
				t.Errorf("Schema{}.Validate(%q) = %v, want ok %v", tt.args, err, tt.ok)
			}
		})
	}
}

func TestArgumentErrorText(t *testing.T) {
	tests := []struct {
		err  *tool.ArgumentError
		want string
	}{
		{&tool.ArgumentError{Reason: "unknown argument"}, "invalid arguments: unknown argument"},
		{&tool.ArgumentError{Field: "q", Reason: "required"}, "invalid argument q: required"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error(%q) = %v, want %v", tt.err.Reason, got, tt.want)
		}
	}
}
