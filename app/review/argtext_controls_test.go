package review

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

// TestStringValues is the argument text that the hidden-character check
// and the egress check (the scanner's views and the taint) read besides
// the arguments as sent: the string values of the call's JSON object
// with their escapes decoded, in the order of their keys. A secret
// written with escapes ("note\nAKIA…", "\u0041KIA…") is read as the
// model meant it; end to end, TestNeverSendsASecretTheRunHasSeen and
// TestE2EArgumentsThatMustNotLeave rely on this. Keys, numbers,
// booleans and null are not values of text; nested objects and arrays
// are not read (the schema rule admits flat scalar properties only, so
// Validate refuses them before this); what is not one JSON object gives
// nothing.
func TestStringValues(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	var manyJSON []string
	for i := range 1000 {
		k := fmt.Sprintf("k%04d", 999-i)
		manyJSON = append(manyJSON, fmt.Sprintf(`%q:"\u0076%d"`, k, 999-i))
	}
	var manyWant []string
	for i := range 1000 {
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
		{"lone high surrogate", `{"q":"a\ud800b"}`, []string{"a\uFFFDb"}},
		{"lone low surrogate", `{"q":"\udc00"}`, []string{"\uFFFD"}},
		{"reversed pair", `{"q":"\ude00\ud83d"}`, []string{"\uFFFD\uFFFD"}},
		{"solidus", `{"q":"AKIA\/IOSFODNN7EXAMPLE"}`, []string{"AKIA/IOSFODNN7EXAMPLE"}},
		{"every one-letter escape", `{"q":"\"\\\/\b\f\n\r\t"}`, []string{"\"\\/\b\f\n\r\t"}},
		{"escaped backslash before u", `{"q":"\\u0041"}`, []string{`\u0041`}},
		{"escaped NUL", `{"q":"a\u0000b"}`, []string{"a\x00b"}},
		{"empty string", `{"q":""}`, []string{""}},
		{"invalid escape", `{"q":"\x41"}`, nil},
		{"short unicode escape", `{"q":"\u004"}`, nil},
		{"escape at the end", `{"q":"a\"}`, nil},
		{"raw control character", "{\"q\":\"a\nb\"}", nil},
		{"raw invalid UTF-8", "{\"q\":\"a\xffb\"}", []string{"a\uFFFDb"}},
		{"keys are not values", `{"AKIA\u0049OSFODNN7EXAMPLE":"x"}`, []string{"x"}},
		{"sorted by key", `{"b":"2","a":"1","c":"3"}`, []string{"1", "2", "3"}},
		{"sorted by the decoded key", `{"\u0062":"2","a":"1"}`, []string{"1", "2"}},
		{"numbers, booleans, null", `{"n":12345678901234567890,"f":1.5e3,"t":true,"z":null,"s":"x"}`, []string{"x"}},
		{"nested object not read", `{"o":{"s":"inner"},"s":"outer"}`, []string{"outer"}},
		{"nested array not read", `{"a":["x","y"],"s":"outer"}`, []string{"outer"}},
		{"duplicate key: the last", `{"q":"a","q":"b"}`, []string{"b"}},
		{"empty object", `{}`, nil},
		{"null", `null`, nil},
		{"a string", `"AKIAIOSFODNN7EXAMPLE"`, nil},
		{"an array", `["AKIAIOSFODNN7EXAMPLE"]`, nil},
		{"a number", `1`, nil},
		{"two objects", `{"q":"a"}{"q":"b"}`, nil},
		{"not JSON", `q=AKIAIOSFODNN7EXAMPLE`, nil},
		{"empty", ``, nil},
		{"long escaped value", `{"q":"` + strings.Repeat(`\u0041\n`, 10000) + `"}`, []string{strings.Repeat("A\n", 10000)}},
		{"long value of pairs", `{"q":"` + strings.Repeat(`\ud83d\ude00`, 5000) + `"}`, []string{strings.Repeat("😀", 5000)}},
		{"a thousand keys", `{` + strings.Join(manyJSON, ",") + `}`, manyWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stringValues([]byte(tt.args))
			if !slices.Equal(got, tt.want) {
				t.Errorf("stringValues(%.80s) = %.80q, want %.80q", tt.args, got, tt.want)
			}
		})
	}
}

// TestStringValuesOfCanonicalArguments: what the call sends is the
// canonical form of the arguments (tool.Canonicalize), and its string
// values are those of the arguments as the model wrote them, escapes
// decoded the same whichever way the model escaped them.
func TestStringValuesOfCanonicalArguments(t *testing.T) {
	for _, args := range []string{
		`{"q":"\u0041KIA\/x\n","n":1}`,
		`{"n":1,"q":"AKIA/x\u000a"}`,
		`{ "q" : "\u0041\u004b\u0049\u0041\u002fx\u000A" , "n" : 1.0 }`,
	} {
		sent, err := tool.Canonicalize([]byte(args))
		if err != nil {
			t.Fatalf("Canonicalize(%s): %v", args, err)
		}
		if got := stringValues(sent); !slices.Equal(got, []string{"AKIA/x\n"}) {
			t.Errorf("stringValues(Canonicalize(%s)) = %q (sent %s), want [\"AKIA/x\\n\"]", args, got, sent)
		}
	}
}
