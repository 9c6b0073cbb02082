package tool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"sorted keys and whitespace", ` { "b" : 1 , "a" : [ true , false , null ] } `, `{"a":[true,false,null],"b":1}`},
		{"nested sort", `{"z":{"y":1,"x":2},"a":{}}`, `{"a":{},"z":{"x":2,"y":1}}`},
		{"utf16 order", `{"\ud83d\ude00":1,"\ufb01":2,"a":3}`, `{"a":3,"😀":1,"ﬁ":2}`},
		{"rfc8785 sorting example", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"integers", `[0,1,-1,100,1e2,123456789012]`, `[0,1,-1,100,100,123456789012]`},
		{"negative zero", `[-0,-0.0,0e5]`, `[0,0,0]`},
		{"decimal", `[1.5,0.1,-2.25,1.0]`, `[1.5,0.1,-2.25,1]`},
		{"shortest round trip", `[0.30000000000000004,3.141592653589793]`, `[0.30000000000000004,3.141592653589793]`},
		{"large plain", `[1e20,1e21,123e18]`, `[100000000000000000000,1e+21,123000000000000000000]`},
		{"small", `[0.000001,0.0000001,1.5e-7]`, `[0.000001,1e-7,1.5e-7]`},
		{"exponent", `[1e30,-1.25e-10,5e-324,1.7976931348623157e308]`, `[1e+30,-1.25e-10,5e-324,1.7976931348623157e+308]`},
		{"2^53+1 loses precision", `9007199254740993`, `9007199254740992`},
		{"rfc8785 numbers", `[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001]`, `[333333333.3333333,1e+30,4.5,0.002,1e-27]`},
		{"underflow is zero", `1e-400`, `0`},
		{"string escapes", `"a\"b\\c\/d\b\f\n\r\t\u0001\u001f\u007f"`, "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\""},
		{"no html escaping", `"<a href='x'>&</a>"`, `"<a href='x'>&</a>"`},
		{"line separators literal", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"unicode escapes decoded", `"\u00e9\ud83d\ude00"`, `"é😀"`},
		{"scalar", ` true `, `true`},
		{"empty containers", `[{},[]]`, `[{},[]]`},
		{"depth 64", strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 64) + strings.Repeat("]", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tool.Canonicalize([]byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Errorf("Canonicalize(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", ``, tool.ErrInvalidJSON},
		{"whitespace only", `   `, tool.ErrInvalidJSON},
		{"syntax", `{"a":}`, tool.ErrInvalidJSON},
		{"trailing comma", `[1,]`, tool.ErrInvalidJSON},
		{"trailing data", `{} {}`, tool.ErrInvalidJSON},
		{"trailing garbage", `1 x`, tool.ErrInvalidJSON},
		{"single quotes", `{'a':1}`, tool.ErrInvalidJSON},
		{"NaN", `NaN`, tool.ErrInvalidJSON},
		{"leading zero", `01`, tool.ErrInvalidJSON},
		{"invalid utf8", "\"\xff\"", tool.ErrInvalidJSON},
		{"lone high surrogate", `"\ud800"`, tool.ErrInvalidJSON},
		{"lone high surrogate at end", `"a\ud800"`, tool.ErrInvalidJSON},
		{"high then non-low", `"\ud800\u0041"`, tool.ErrInvalidJSON},
		{"high then other escape", `"\ud800\n"`, tool.ErrInvalidJSON},
		{"lone low surrogate", `"\udc00"`, tool.ErrInvalidJSON},
		{"lone surrogate in key", `{"\uDBFF":1}`, tool.ErrInvalidJSON},
		{"duplicate key", `{"a":1,"a":2}`, tool.ErrDuplicateKey},
		{"duplicate key after unescape", `{"a":1,"\u0061":2}`, tool.ErrDuplicateKey},
		{"nested duplicate", `{"x":[{"k":1,"k":1}]}`, tool.ErrDuplicateKey},
		{"overflow", `1e309`, tool.ErrNumberRange},
		{"negative overflow", `[-1e400]`, tool.ErrNumberRange},
		{"too deep arrays", strings.Repeat("[", 65) + strings.Repeat("]", 65), tool.ErrTooDeep},
		{"too deep objects", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), tool.ErrTooDeep},
		{"very deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), tool.ErrInvalidJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tool.Canonicalize([]byte(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("Canonicalize(%q) = %q, %v, want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestCanonicalizeEscapedBackslashBeforeU(t *testing.T) {
	// "\\ud800" is a backslash followed by the text ud800, not an escape.
	in := `"\\ud800"`
	got, err := tool.Canonicalize([]byte(in))
	if err != nil || string(got) != `"\\ud800"` {
		t.Errorf("Canonicalize(%q) = %q, %v, want %q", in, got, err, `"\\ud800"`)
	}
}
