package tool_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
)

var qSchema = tooltest.Schema(`{"q":""}`)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestCheckReadsArgumentsOnce: the value Check returns is what is sent
// (canonical JSON), its hash and the decoded strings in key order; a
// refusal keeps only what the call record needs.
func TestCheckReadsArgumentsOnce(t *testing.T) {
	s, err := tool.CheckSchema(json.RawMessage(validateSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, canonical, hashOf string
		strings                       []string
		wantErr                       bool
	}{
		{"canonical order and escapes", `{ "q" : "a\u0041\/b", "e":"open", "n": 1.50 }`, `{"e":"open","n":1.5,"q":"aA/b"}`, `{"e":"open","n":1.5,"q":"aA/b"}`, []string{"open", "aA/b"}, false},
		{"numbers and booleans are no strings", `{"q":"x","i":3,"b":true}`, `{"b":true,"i":3,"q":"x"}`, `{"b":true,"i":3,"q":"x"}`, []string{"x"}, false},
		{"refused: hash of the canonical form", `{"q":1, "n":2}`, "", `{"n":2,"q":1}`, nil, true},
		{"refused: hash of what is not JSON", `{"q":`, "", `{"q":`, nil, true},
		{"refused: duplicate key hashed as given", `{"q":"a","q":"b"}`, "", `{"q":"a","q":"b"}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := s.Check(json.RawMessage(tt.args))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got := string(a.Canonical()); got != tt.canonical {
				t.Errorf("Canonical = %q, want %q", got, tt.canonical)
			}
			if a.Hash() != sha(tt.hashOf) || a.Len() != len(tt.hashOf) {
				t.Errorf("Hash, Len = %s, %d; want those of %q", a.Hash(), a.Len(), tt.hashOf)
			}
			if !slices.Equal(a.Strings(), tt.strings) {
				t.Errorf("Strings = %q, want %q", a.Strings(), tt.strings)
			}
		})
	}
}

// TestArgumentStrings is the argument text that the hidden-character
// check and the egress check (the scanner's views and the taint) read
// besides the arguments as sent: the string values of the call's JSON
// object with their escapes decoded, in the order of their keys. A secret
// written with escapes ("note\nAKIA…", "\u0041KIA…") is read as the
// model meant it; end to end, TestNeverSendsASecretTheRunHasSeen and
// TestE2EArgumentsThatMustNotLeave rely on this. Keys, numbers
// and booleans are not values of text; what is not one flat JSON object
// of valid JSON (nil here) is refused.
func TestArgumentStrings(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	var manyJSON []string
	for i := range 20 {
		k := fmt.Sprintf("k%04d", 19-i)
		manyJSON = append(manyJSON, fmt.Sprintf(`%q:"\u0076%d"`, k, 19-i))
	}
	var manyWant []string
	for i := range 20 {
		manyWant = append(manyWant, fmt.Sprintf("v%d", i))
	}
	tests := []struct {
		name, args string
		want       []string
	}{
		{"plain", `{"q":"wiki"}`, []string{"wiki"}},
		{"newline escape", `{"note":"note\nAKIAIOSFODNN7EXAMPLE"}`, []string{"note\n" + key}},
		{"unicode escape", `{"q":"\u0041KIA\u0049OSFODNN7EXAMPLE"}`, []string{key}},
		{"uppercase hex", `{"q":"\u00C9\u00e9"}`, []string{"Éé"}},
		{"surrogate pair", `{"q":"a\ud83d\ude00b"}`, []string{"a😀b"}},
		{"lone high surrogate", `{"q":"a\ud800b"}`, nil},
		{"lone low surrogate", `{"q":"\udc00"}`, nil},
		{"reversed pair", `{"q":"\ude00\ud83d"}`, nil},
		{"solidus", `{"q":"AKIA\/IOSFODNN7EXAMPLE"}`, []string{"AKIA/IOSFODNN7EXAMPLE"}},
		{"every one-letter escape", `{"q":"\"\\\/\b\f\n\r\t"}`, []string{"\"\\/\b\f\n\r\t"}},
		{"escaped backslash before u", `{"q":"\\u0041"}`, []string{`\u0041`}},
		{"escaped NUL", `{"q":"a\u0000b"}`, []string{"a\x00b"}},
		{"empty string", `{"q":""}`, []string{""}},
		{"numbers and booleans", `{"n":1,"b":true,"q":"x"}`, []string{"x"}},
		{"invalid escape", `{"q":"\x41"}`, nil},
		{"short unicode escape", `{"q":"\u004"}`, nil},
		{"escape at the end", `{"q":"a\"}`, nil},
		{"raw control character", "{\"q\":\"a\nb\"}", nil},
		{"raw invalid UTF-8", "{\"q\":\"a\xffb\"}", nil},
		{"keys are not values", `{"AKIA\u0049OSFODNN7EXAMPLE":"x"}`, []string{"x"}},
		{"sorted by key", `{"b":"2","a":"1","c":"3"}`, []string{"1", "2", "3"}},
		{"sorted by the decoded key", `{"\u0062":"2","a":"1"}`, []string{"1", "2"}},
		{"numbers, booleans, null", `{"n":12345678901234567890,"f":1.5e3,"t":true,"s":"x"}`, []string{"x"}},
		{"nested object", `{"o":{"s":"inner"},"s":"outer"}`, nil},
		{"nested array", `{"a":["x","y"],"s":"outer"}`, nil},
		{"duplicate key", `{"q":"a","q":"b"}`, nil},
		{"empty object", `{}`, []string{}},
		{"null", `null`, nil},
		{"a string", `"AKIAIOSFODNN7EXAMPLE"`, nil},
		{"an array", `["AKIAIOSFODNN7EXAMPLE"]`, nil},
		{"a number", `1`, nil},
		{"two objects", `{"q":"a"}{"q":"b"}`, nil},
		{"not JSON", `q=AKIAIOSFODNN7EXAMPLE`, nil},
		{"empty", ``, nil},
		{"long escaped value", `{"q":"` + strings.Repeat(`\u0041\n`, 250) + `"}`, []string{strings.Repeat("A\n", 250)}},
		{"long value of pairs", `{"q":"` + strings.Repeat(`\ud83d\ude00`, 500) + `"}`, []string{strings.Repeat("😀", 500)}},
		{"twenty keys", `{` + strings.Join(manyJSON, ",") + `}`, manyWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := qSchema
			if json.Valid([]byte(tt.args)) && strings.HasPrefix(tt.args, "{") {
				schema = tooltest.Schema(tt.args)
			}
			a, err := schema.Check(json.RawMessage(tt.args))
			if (err != nil) != (tt.want == nil) {
				t.Fatalf("Check(%.80s): %v", tt.args, err)
			}
			if got := a.Strings(); !slices.Equal(got, tt.want) {
				t.Errorf("Strings of %.80s = %.80q, want %.80q", tt.args, got, tt.want)
			}
		})
	}
}

// TestArgumentsOfEveryEscaping: what a call sends is the canonical form
// of the arguments, and their strings are those the model wrote, escapes
// decoded the same whichever way the model escaped them.
func TestArgumentsOfEveryEscaping(t *testing.T) {
	s := tooltest.Schema(`{"q":"","n":1}`)
	for _, args := range []string{
		`{"q":"\u0041KIA\/x\n","n":1}`,
		`{"n":1,"q":"AKIA/x\u000a"}`,
		`{ "q" : "\u0041\u004b\u0049\u0041\u002fx\u000A" , "n" : 1.0 }`,
	} {
		a, err := s.Check(json.RawMessage(args))
		if err != nil {
			t.Fatalf("Check(%s): %v", args, err)
		}
		if got := a.Strings(); !slices.Equal(got, []string{"AKIA/x\n"}) || string(a.Canonical()) != `{"n":1,"q":"AKIA/x\n"}` {
			t.Errorf("Check(%s) = %s, %q; want the canonical form and [\"AKIA/x\\n\"]", args, a.Canonical(), got)
		}
	}
}
