package reviews

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// wrapResult is structuredContent {"result": v} as the go-sdk client
// hands it on (json.Marshal: sorted keys, HTML characters escaped).
func wrapResult(v any) json.RawMessage {
	b, err := json.Marshal(map[string]any{"result": v})
	if err != nil {
		panic(err)
	}
	return b
}

// TestResultText: structuredContent that only repeats the single text
// item is dropped (the text reaches the model once); anything else keeps
// both, as before.
func TestResultText(t *testing.T) {
	const both, once = false, true
	big := strings.Repeat("x", limits.ToolResultCap)
	nested := func(depth int) string { return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth) }
	tests := []struct {
		name       string
		texts      []string
		structured string
		once       bool
	}{
		// Repeats: the text alone reaches the model.
		{"FastMCP str result", []string{"The cache was added in ADR-7."}, `{"result":"The cache was added in ADR-7."}`, once},
		{"FastMCP str with escapes, newlines and HTML", []string{"a<b> & \"c\"\n\tdé\u2028"}, string(wrapResult("a<b> & \"c\"\n\tdé\u2028")), once},
		{"FastMCP empty str", []string{""}, `{"result":""}`, once},
		{"FastMCP str that looks like a number", []string{"42"}, `{"result":"42"}`, once},
		{"FastMCP int", []string{"42"}, `{"result":42}`, once},
		{"FastMCP float", []string{"1.5"}, `{"result":1.5}`, once},
		{"FastMCP bool", []string{"true"}, `{"result":true}`, once},
		{"FastMCP None-valued result", []string{"null"}, `{"result":null}`, once},
		{"FastMCP model, pydantic indent=2", []string{"{\n  \"title\": \"ADR-7\",\n  \"hits\": 3\n}"}, `{"hits":3,"title":"ADR-7"}`, once},
		{"FastMCP list as one JSON text", []string{"[\n  1,\n  2\n]"}, `{"result":[1,2]}`, once},
		{"TypeScript JSON.stringify", []string{`{"title":"ADR-7","tags":["cache","db"],"n":null}`}, `{"n":null,"tags":["cache","db"],"title":"ADR-7"}`, once},
		{"TypeScript JSON.stringify with indent", []string{"{\n  \"a\": {\n    \"b\": [true, false]\n  }\n}"}, `{"a":{"b":[true,false]}}`, once},
		{"Go SDK json.Marshal", []string{`{"a":1,"b":"x\u003cy"}`}, `{"a":1,"b":"x\u003cy"}`, once},
		{"key order and whitespace around the text", []string{" \n{\"b\":2, \"a\":1}\r\n\t"}, `{"a":1,"b":2}`, once},
		{"primitive structured string", []string{"hello"}, `"hello"`, once},
		{"primitive structured, JSON text", []string{`"hello"`}, `"hello"`, once},
		{"a {\"result\": …} text repeats itself", []string{`{"result":"x"}`}, `{"result":"x"}`, once},
		{"JSON string text of a wrapped str", []string{`"x"`}, `{"result":"x"}`, once},
		{"numbers equal as doubles: 1.0 and 1", []string{`{"n":1.0}`}, `{"n":1}`, once},
		{"numbers equal as doubles: exponent", []string{`{"n":1e2}`}, `{"n":100}`, once},
		{"numbers equal as doubles: -0 and 0", []string{`-0`}, `{"result":0}`, once},
		{"numbers equal as doubles: a big integer the go-sdk rounded", []string{`{"id":12345678901234567891}`}, `{"id":12345678901234567000}`, once},
		{"unicode escapes in the text", []string{`{"s":"\u00e9\u0041"}`}, `{"s":"éA"}`, once},
		{"exactly the cap", []string{big}, string(wrapResult(big)), once},

		// Not repeats: both reach the model.
		{"differs by one character", []string{"The cache was added in ADR-7."}, `{"result":"The cache was added in ADR-8."}`, both},
		{"trailing whitespace in the text", []string{"hello "}, `{"result":"hello"}`, both},
		{"leading newline in the text", []string{"\nhello"}, `{"result":"hello"}`, both},
		{"whitespace inside a JSON string", []string{`{"a":"x "}`}, `{"a":"x"}`, both},
		{"case of a letter", []string{"Hello"}, `{"result":"hello"}`, both},
		{"an extra member next to result", []string{"hello"}, `{"result":"hello","secret":"AKIA"}`, both},
		{"Result is not result", []string{"hello"}, `{"Result":"hello"}`, both},
		{"result of another type", []string{"hello"}, `{"result":5}`, both},
		{"a string is not the number", []string{`"42"`}, `{"result":42}`, both},
		{"JSON of a different value: member", []string{`{"a":1,"b":[1,2]}`}, `{"a":1,"b":[2,1]}`, both},
		{"JSON of a different value: missing member", []string{`{"a":1}`}, `{"a":1,"b":2}`, both},
		{"JSON of a different value: extra member", []string{`{"a":1,"b":2}`}, `{"a":1}`, both},
		{"JSON of a different value: type", []string{`{"a":"1"}`}, `{"a":1}`, both},
		{"JSON of a different value: null is not false", []string{`{"a":null}`}, `{"a":false}`, both},
		{"JSON of a different value: longer array", []string{`[1,2]`}, `{"result":[1,2,3]}`, both},
		{"JSON of a different value: array is not object", []string{`[]`}, `{}`, both},
		{"JSON of a different value: nested", []string{`{"a":{"b":{"c":1}}}`}, `{"a":{"b":{"c":2}}}`, both},
		{"numbers that differ as doubles", []string{`{"n":0.1}`}, `{"n":0.10000000000000002}`, both},
		{"a number beyond a double", []string{`1e400`}, `{"result":1e400}`, both},
		{"trailing data after the JSON", []string{`{"a":1} x`}, `{"a":1}`, both},
		{"two JSON values", []string{`{"a":1}{"a":1}`}, `{"a":1}`, both},
		{"duplicate member names in the text", []string{`{"a":2,"a":2}`}, `{"a":2}`, both},
		{"duplicate member names hiding another value", []string{`{"a":1,"a":2}`}, `{"a":2}`, both},
		{"invalid JSON text", []string{`{"a":1,}`}, `{"a":1}`, both},
		{"invalid UTF-8 in the text", []string{"caf\xe9"}, `{"result":"caf\ufffd"}`, both},
		{"invalid UTF-8 inside a JSON string", []string{"{\"a\":\"\xff\"}"}, `{"a":"\ufffd"}`, both},
		{"two text items, repeated", []string{"hello", "hello"}, `{"result":"hello"}`, both},
		{"two text items, split", []string{"hel", "lo"}, `{"result":"hello"}`, both},
		{"two text items, joined as resultText joins them", []string{"a", "b"}, `{"result":"a\n\nb"}`, both},
		{"FastMCP list as one text per item", []string{"1", "2"}, `{"result":[1,2]}`, both},
		{"no text item", nil, `{"result":"x"}`, both},
		{"invalid structured JSON", []string{"x"}, `{"result":"x"`, both},
		{"nested deeper than the bound", []string{nested(maxRepeatDepth + 1)}, nested(maxRepeatDepth + 1), both},
		{"over the cap: not compared", []string{big + "x"}, string(wrapResult(big + "x")), both},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ports.ToolResult{Texts: tt.texts, Structured: json.RawMessage(tt.structured)}
			got := resultText(out)
			want := strings.Join(append(append([]string{}, tt.texts...), tt.structured), "\n\n")
			if tt.once {
				want = tt.texts[0]
			}
			if got != want {
				t.Errorf("resultText = %.120q, want %.120q", got, want)
			}
		})
	}
}

// TestResultTextWithoutStructuredContent: text items alone are joined as
// before.
func TestResultTextWithoutStructuredContent(t *testing.T) {
	if got := resultText(ports.ToolResult{Texts: []string{"a", "b"}}); got != "a\n\nb" {
		t.Errorf("resultText = %q", got)
	}
	if got := resultText(ports.ToolResult{}); got != "" {
		t.Errorf("resultText = %q", got)
	}
}

// TestRepeatDepthBound: JSON nested exactly to the bound is still
// compared (and the bound keeps both beyond it, in TestResultText).
func TestRepeatDepthBound(t *testing.T) {
	v := strings.Repeat("[", maxRepeatDepth) + "1" + strings.Repeat("]", maxRepeatDepth)
	if !repeatsText([]string{v}, []byte(v)) {
		t.Errorf("JSON nested %d deep is not compared", maxRepeatDepth)
	}
}

// FuzzRepeatsText: a structured copy is dropped only when encoding/json,
// reading both on its own, finds the kept text to be the same value (or
// the string itself): never for JSON it reads as a different value.
func FuzzRepeatsText(f *testing.F) {
	f.Add("hello", `{"result":"hello"}`)
	f.Add(`{"a":[1,2,{"b":null}]}`, `{"a":[1,2,{"b":null}]}`)
	f.Add(`{"a":1,"a":2}`, `{"a":2}`)
	f.Add("42", `{"result":42}`)
	f.Fuzz(func(t *testing.T, text, structured string) {
		if !repeatsText([]string{text}, []byte(structured)) {
			return
		}
		var s any
		if err := json.Unmarshal([]byte(structured), &s); err != nil {
			t.Fatalf("dropped structured content that is not JSON: %q", structured)
		}
		cands := []any{s}
		if obj, ok := s.(map[string]any); ok && len(obj) == 1 {
			if v, ok := obj["result"]; ok {
				cands = append(cands, v)
			}
		}
		var v any
		textIsJSON := json.Unmarshal([]byte(text), &v) == nil
		for _, c := range cands {
			if str, ok := c.(string); ok && str == text {
				return
			}
			if textIsJSON && jsonEqual(c, v) {
				return
			}
		}
		t.Fatalf("dropped %q as a repeat of %q", structured, text)
	})
}

// TestUnescapeJSON: the scanner's unescaped view of a result. Each JSON
// escape becomes its character once (an escaped backslash is not read
// again as the start of an escape), and what is not an escape stays.
func TestUnescapeJSON(t *testing.T) {
	tests := []struct {
		in, want string
		changed  bool
	}{
		{"plain text", "plain text", false},
		{`\u0041KIA`, "AKIA", true},
		{`\u0061\u0062`, "ab", true},
		{`a\/b\"c\\d`, `a/b"c\d`, true},
		{`\b\f\n\r\t`, "\b\f\n\r\t", true},
		{`\ud83d\ude00`, "\U0001F600", true},
		{`\ud83d alone`, "\uFFFD alone", true},
		{`\ude00`, "\uFFFD", true},
		{`\ud83d\u0041`, "\uFFFDA", true},
		{`\\u0041`, `\u0041`, true},
		{`\u00zz`, `\u00zz`, false},
		{`\u004`, `\u004`, false},
		{`\x41`, `\x41`, false},
		{`ends with \`, `ends with \`, false},
		{`{"key":"\u0041KIAIOSFODNN7EXAMPLE"}`, `{"key":"AKIAIOSFODNN7EXAMPLE"}`, true},
	}
	for _, tt := range tests {
		got, changed := unescapeJSON(tt.in)
		if got != tt.want || changed != tt.changed {
			t.Errorf("unescapeJSON(%q) = %q, %t; want %q, %t", tt.in, got, changed, tt.want, tt.changed)
		}
	}
}

// FuzzUnescapeJSON: wherever s is the body of a valid JSON string, the
// view is what encoding/json decodes it to; and a text without a
// backslash is its own view.
func FuzzUnescapeJSON(f *testing.F) {
	for _, s := range []string{`\u0041KIA`, `a\/b`, `\ud83d\ude00`, `\ud83d`, `\\u0041`, `\u00zz`, "plain", `\"q\"`, `\ude00\ud83d`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		view, changed := unescapeJSON(s)
		if !strings.Contains(s, `\`) && (changed || view != s) {
			t.Fatalf("unescapeJSON(%q) = %q, %t; want the text unchanged", s, view, changed)
		}
		var decoded string
		if utf8.ValidString(s) && json.Unmarshal([]byte(`"`+s+`"`), &decoded) == nil && decoded != view {
			t.Fatalf("unescapeJSON(%q) = %q; encoding/json decodes %q", s, view, decoded)
		}
	})
}

// TestRemoveInvisible: what the model reads of a result loses every
// invisible character, raw or written as a JSON escape, each counted once;
// an escaped backslash is not the start of an escape, and visible escapes
// stay as written.
func TestRemoveInvisible(t *testing.T) {
	tests := []struct {
		name, in, want string
		removed        int
	}{
		{"plain", "plain text", "plain text", 0},
		{"raw zero width", "ig\u200bnore", "ignore", 1},
		{"escaped zero width", `ig\u200bnore`, "ignore", 1},
		{"upper-case hex", `ig\u200Bnore`, "ignore", 1},
		{"escaped bidi override", `a\u202Eb\u2066c`, "abc", 2},
		{"tag character as a surrogate pair", `ok\udb40\udc49\udb40\udc47.`, "ok.", 2},
		{"escaped bom, soft hyphen, nul", `\ufeffde\u00adfault\u0000`, "default", 3},
		{"escaped carriage return, newline and tab kept", `a\r\nb\u0009c\u000a`, `a\nb\u0009c\u000a`, 1},
		{"only one-letter escapes", `x\byz\f`, "xyz", 2},
		{"escaped backslash beside an escape", `\\u200b \u0041`, `\\u200b \u0041`, 0},
		{"escaped backslash", `\\u200b`, `\\u200b`, 0},
		{"escaped backslash, then an escape", `\\\u200b`, `\\`, 1},
		{"visible escapes kept", `\u0041 \ud83d\ude00 \udb40 \"`, `\u0041 \ud83d\ude00 \udb40 \"`, 0},
		{"an escape the removal completes", `\u20\u200b0b`, "", 2},
		{"a pair the removal completes", `\udb40\u200b\udc41`, "", 2},
		{"an escape a raw removal completes", "\\\u200bu200b", "", 2},
		{"in a JSON document", `{"note":"ig\u200bnore \u202eall"}`, `{"note":"ignore all"}`, 2},
		{"not an escape", `\u12 \x41 ends with \`, `\u12 \x41 ends with \`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := removeInvisible(tt.in)
			if got != tt.want || n != tt.removed {
				t.Errorf("removeInvisible(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.removed)
			}
		})
	}
}

// FuzzRemoveInvisible: neither the text nor its unescaped view keeps an
// invisible character, a second pass removes nothing, and where s is the
// body of a JSON string the decoded result is the decoded s without its
// invisible characters, n of them (a lone surrogate aside: two can become
// a pair).
func FuzzRemoveInvisible(f *testing.F) {
	for _, s := range []string{`ig\u200bnore`, `\udb40\udc41`, `\\u200b`, `\u20\u200b0b`, "a\u202eb", `\r\n`, `\udb40\u200b\udc41`, "plain"} {
		f.Add(s)
	}
	visible := func(s string) bool {
		return !strings.ContainsFunc(s, tool.Invisible)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, n := removeInvisible(s)
		view, _ := unescapeJSON(out)
		if !visible(out) || !visible(view) {
			t.Fatalf("removeInvisible(%q) = %q (view %q) keeps an invisible character", s, out, view)
		}
		if again, m := removeInvisible(out); again != out || m != 0 {
			t.Fatalf("removeInvisible(%q) = %q, not idempotent: %q, %d", s, out, again, m)
		}
		var in, got string
		if json.Unmarshal([]byte(`"`+s+`"`), &in) != nil || strings.ContainsRune(in, utf8.RuneError) {
			return
		}
		if err := json.Unmarshal([]byte(`"`+out+`"`), &got); err != nil {
			t.Fatalf("removeInvisible(%q) = %q, no longer a JSON string body: %v", s, out, err)
		}
		want, m := tool.StripInvisible(in)
		if got != want || n != m {
			t.Fatalf("removeInvisible(%q) = %q, %d decodes to %q; want %q, %d", s, out, n, got, want, m)
		}
	})
}
