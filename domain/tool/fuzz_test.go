package tool_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
)

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,null,"x"]}`, `-0`, `1e21`, `1e-7`, `0.1`, `"\u2028<&>"`,
		`{"\ud83d\ude00":1,"\ufb01":2}`, `"\ud800"`, `{"a":1,"a":2}`, `[[[[]]]]`, `1e400`,
		`"\\ud800"`, "\"\xff\"", `123456789012345678901234567890`, ` `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := tool.Canonicalize(in)
		if err != nil {
			return
		}
		again, err := tool.Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Canonicalize(%q) = %q, not idempotent: %q, %v", in, out, again, err)
		}
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("Canonicalize(%q) = %q, not valid JSON", in, out)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("Canonicalize(%q) = %q, meaning differs: %v vs %v", in, out, a, b)
		}
	})
}

func FuzzCheckSchema(f *testing.F) {
	for _, s := range []string{
		searchSchema, validateSchema, `{"type":"object"}`, props(21), enumOf(51),
		`{"type":"object","properties":{"e":{"enum":["a","b"],"default":"a"}}}`,
		`{"type":"object","properties":{"x":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"x":{"$ref":"#"}}}`,
		newKeywordsSchema,
		`{"type":"object","$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"properties":{"x":{"$ref":"#/$defs/A"}}}`,
		`{"type":"object","properties":{"p":{"type":"string","pattern":"(?<n>a)\\s.[^\\s]{2,3}\\u00e9\\x41{"}}}`,
		`{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":true,"minimum":"3","maxLength":-1,"enum":[]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := tool.CheckSchema(in)
		if err != nil {
			return
		}
		if n := len(s.Properties()); n > limits.MaxSchemaProperties {
			t.Fatalf("CheckSchema(%q) accepted %d properties", in, n)
		}
		for _, p := range s.Properties() {
			if len(p.Enum()) > limits.MaxEnumValues {
				t.Fatalf("CheckSchema(%q) accepted %d enum values", in, len(p.Enum()))
			}
		}
		// The model schema is canonical and is itself nothing but flat
		// scalars: a schema this rule accepts, with the same properties.
		ms := s.ModelSchema()
		if c, err := tool.Canonicalize(ms); err != nil || !bytes.Equal(c, ms) {
			t.Fatalf("ModelSchema() of %q = %q, not canonical", in, ms)
		}
		m, err := tool.CheckSchema(ms)
		if err != nil || len(m.Properties()) != len(s.Properties()) {
			t.Fatalf("ModelSchema() of %q = %q, not supported: %v", in, ms, err)
		}
	})
}

func FuzzValidate(f *testing.F) {
	for _, s := range []struct{ schema, args string }{
		{validateSchema, `{"q":"x","i":3.0,"e":"open"}`},
		{validateSchema, `{"q":null}`},
		{validateSchema, `{"q":"x","q":"y"}`},
		{validateSchema, `{"q":"\u00e9\u00e9"}`},
		{`{"type":"object","properties":{"s":{"type":"string"}}}`, `{"s":"` + string(bytes.Repeat([]byte("a"), 501)) + `"}`},
		{newKeywordsSchema, `{"n":5,"s":"ab","o":null,"c":"red","d":"2026-12-01"}`},
		{newKeywordsSchema, `{"n":5.5,"s":"a","o":0,"c":"blue","d":"2026-13-01"}`},
	} {
		f.Add([]byte(s.schema), []byte(s.args))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		s, err := tool.CheckSchema(schema)
		if err != nil {
			return
		}
		if s.Validate(args) != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil || m == nil {
			t.Fatalf("Validate(%q) accepted a non-object: %v", args, err)
		}
		names, nullable := map[string]bool{}, map[string]bool{}
		for _, p := range s.Properties() {
			names[p.Name()] = true
			nullable[p.Name()] = p.Nullable()
		}
		for k, v := range m {
			if !names[k] {
				t.Fatalf("Validate(%q) accepted unknown key %q", args, k)
			}
			if str, ok := v.(string); ok && utf8.RuneCountInString(str) > limits.MaxArgumentStringLen {
				t.Fatalf("Validate(%q) accepted a string of %d runes", args, utf8.RuneCountInString(str))
			}
			if _, ok := v.(map[string]any); ok {
				t.Fatalf("Validate(%q) accepted a nested object", args)
			}
			if _, ok := v.([]any); ok || v == nil && !nullable[k] {
				t.Fatalf("Validate(%q) accepted an array or a null that is not allowed", args)
			}
		}
	})
}

// newKeywordsSchema uses every keyword of the flat scalar rule.
const newKeywordsSchema = `{"type":"object","$defs":{"C":{"type":"string","enum":["red","green"]}},"properties":{` +
	`"n":{"type":"integer","minimum":1,"maximum":100,"multipleOf":5,"exclusiveMaximum":101},` +
	`"s":{"type":"string","minLength":2,"maxLength":9,"pattern":"^[a-z]+$"},` +
	`"o":{"anyOf":[{"type":"number","exclusiveMinimum":0},{"type":"null"}],"default":null},` +
	`"c":{"$ref":"#/$defs/C"},"d":{"type":["string","null"],"format":"date"},"k":{"const":true}},"required":["n"]}`
