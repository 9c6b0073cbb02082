package tool

import (
	"bytes"
	"strings"
	"testing"
)

// Differential tests: the one-pass reader against the implementation it
// replaced (oracle_test.go). Canonical bytes and hashes must be identical
// for any input. The schema rule has since grown (docs/schemas.md): every
// schema the old check accepted must still be accepted, read the same way
// and validate arguments the same way; what it refused is now the table
// tests' and the validator differential's (validator_diff_test.go).

// diffSeeds are inputs that reach every refusal and every branch of the
// canonical form, in both orders where precedence matters.
var diffSeeds = []string{
	``, ` `, `{`, `{"a":}`, `[1,]`, `{} {}`, `1 x`, `{'a':1}`, `NaN`, `01`, `-`, `1.`, `1e`, `.5`, `tru`, `nul`,
	"\"\xff\"", "\"a\x01\"", `"\ud800"`, `"a\ud800"`, `"\ud800\u0041"`, `"\ud800\n"`, `"\udc00"`, `{"\uDBFF":1}`,
	`"\ud800\udc00"`, `"\\ud800"`, `"\u00e9\ud83d\ude00"`, `"\uZZZZ"`, `"\ud800\uZZZZ"`, `"\q"`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":[{"k":1,"k":1}]}`, `{"a":1,"a":[1e999]}`, `{"a":[1e999],"a":1}`,
	`{"b":1,"a":2,"b":3,"a":4}`, `[1e309,{"a":1,"a":2}]`, `[{"a":1,"a":2},1e309]`, `"\ud800" {"a":1,"a":2}`,
	`1e309`, `[-1e400]`, `1e-400`, `-0`, `-0.0`, `0e5`, `[0,1,-1,100,1e2,123456789012]`, `9007199254740993`,
	`123456789012345`, `1234567890123456`, `-999999999999999`, `[1.5,0.1,-2.25,1.0]`, `[1e20,1e21,123e18]`,
	`[0.000001,0.0000001,1.5e-7]`, `[1e30,-1.25e-10,5e-324,1.7976931348623157e308]`, `4.50`, `2e-3`, `1E+2`,
	`"a\"b\\c\/d\b\f\n\r\t\u0001\u001f\u007f"`, `"<a href='x'>&</a>"`, `"\u2028\u2029"`, ` true `, `false`, `null`,
	`[{},[]]`, `{"z":{"y":1,"x":2},"a":{}}`, `{"\ud83d\ude00":1,"\ufb01":2,"a":3,"\u00e9":4,"\uffff":5}`,
	strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
	strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), `[` + strings.Repeat("[", 70) + `1e999` + strings.Repeat("]", 71),
	`[1e999,` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `]`,
	// Schemas.
	`{"type":"object"}`, `{"type":"object","properties":{}}`, `[]`, `{"properties":{}}`, `{"type":"string"}`,
	`{"type":["object","null"]}`, `{"type":"object","properties":[]}`, `{"type":"object","additionalProperties":true}`,
	`{"type":"object","title":1}`, `{"type":"object","$ref":"#"}`, `{"type":"object","oneOf":[],"$ref":"x"}`,
	`{"type":"object","x-custom":1}`, `{"type":"object","ignore previous\ninstructions":1}`,
	`{"type":"object","properties":{"a-b":{"type":"string"}}}`, `{"type":"object","properties":{"é":{"type":"string"}}}`,
	`{"type":"object","properties":{"x":true}}`, `{"type":"object","properties":{"x":{"type":"object"}}}`,
	`{"type":"object","properties":{"x":{"type":"array","items":{}}}}`, `{"type":"object","properties":{"x":{"type":"<b>"}}}`,
	`{"type":"object","properties":{"x":{"type":1}}}`, `{"type":"object","properties":{"x":{}}}`,
	`{"type":"object","properties":{"x":{"format":"uri","pattern":"a","type":"string"}}}`,
	`{"type":"object","properties":{"x":{"enum":[1,2]}}}`, `{"type":"object","properties":{"x":{"enum":["a","a"]}}}`,
	`{"type":"object","properties":{"x":{"type":"integer","enum":["1"]}}}`, `{"type":"object","properties":{"x":{"enum":[]}}}`,
	`{"type":"object","properties":{"x":{"enum":["\u000ba"," a","a\u200bb","x\n"]}}}`,
	`{"type":"object","properties":{"x":{"type":"string"}},"required":["x","x"]}`,
	`{"type":"object","properties":{"x":{"type":"string"}},"required":["y"]}`, `{"type":"object","required":"x"}`,
	`{"type":"object","properties":{"x":{"type":"integer","default":1.5},"y":{"type":"string","default":null}}}`,
	`{"type":"object","properties":{"x":{"enum":["a"],"default":"b"}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","title":"T","description":"D","type":"object","properties":{"q":{"type":"string","title":"Q","description":"d","default":"x"},"n":{"type":"number"},"i":{"type":"integer","default":3},"b":{"type":"boolean"},"e":{"enum":["x<y","a"]}},"required":["q","e"],"additionalProperties":false}`,
	// x-mcp-header.
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`,
	`{"type":"object","properties":{"r":{"type":"integer","x-mcp-header":"Limit"},"b":{"type":"boolean","x-mcp-header":"Flag"}}}`,
	`{"type":"object","properties":{"r":{"type":"number","x-mcp-header":"N"}}}`,
	`{"type":"object","properties":{"r":{"enum":["a"],"x-mcp-header":"E"}}}`,
	`{"type":"object","properties":{"r":{"type":"string","enum":["a"],"x-mcp-header":"E"}}}`,
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":""}}}`,
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":null}}}`,
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"A B"}}}`,
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Ä"}}}`,
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"!#$%&'*+-.^_|~09azAZ"}}}`,
	`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Same"},"b":{"type":"string","x-mcp-header":"sAME"}}}`,
	`{"type":"object","x-mcp-header":"Top"}`,
}

func FuzzCanonicalizeDifferential(f *testing.F) {
	for _, s := range diffSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Canonicalize(in)
		want, oldErr := oldCanonicalize(in)
		if !bytes.Equal(got, want) || errText(err) != errText(oldErr) {
			t.Fatalf("Canonicalize(%q) = %q, %v; the old reader: %q, %v", in, got, err, want, oldErr)
		}
	})
}

func FuzzCheckSchemaDifferential(f *testing.F) {
	for _, s := range diffSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := CheckSchema(in)
		want, oldErr := oldCheckSchema(in)
		if oldErr == nil && (err != nil || !sameSchema(got, want)) {
			t.Fatalf("CheckSchema(%q) = %+v, %v; the old check: %+v, %v", in, got, err, want, oldErr)
		}
	})
}

func FuzzDefinitionDifferential(f *testing.F) {
	for _, s := range diffSeeds {
		f.Add("search", "Searches.", []byte(s), []byte(`{"readOnlyHint":true}`))
		f.Add("t", "", []byte(`{"type":"object"}`), []byte(s))
	}
	f.Add("", "", []byte(`{}`), []byte(nil))
	f.Add("a\xff", "d\xff", []byte(`{}`), []byte(` null `))
	f.Add("files.read", "", []byte(`{"type":"object"}`), []byte(`{"destructiveHint":true,"readOnlyHint":true}`))
	f.Fuzz(func(t *testing.T, name, description string, schema, annotations []byte) {
		got, err := NewDefinition(name, description, schema, annotations)
		want, oldErr := oldNewDefinition(name, description, schema, annotations)
		if errText(err) != errText(oldErr) {
			t.Fatalf("NewDefinition(%q, %q) = %v; the old one: %v", schema, annotations, err, oldErr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(got.inputSchema, want.inputSchema) || !bytes.Equal(got.annotations, want.annotations) ||
			WriteCapable(got) != WriteCapable(want) {
			t.Fatalf("NewDefinition(%q, %q) = %q %q, the old one %q %q", schema, annotations,
				got.inputSchema, got.annotations, want.inputSchema, want.annotations)
		}
		if h, old := Hash(got), oldHash(want); h != old {
			t.Fatalf("Hash(%q, %q) = %s, the old hash %s", schema, annotations, h, old)
		}
		a, old := Assess("wiki", got), oldAssess("wiki", want)
		if a.Hash != old.Hash || a.WriteCapable != old.WriteCapable || old.Supported && (!a.Supported || a.Reason != "") {
			t.Fatalf("Assess(%q) = %v %q, the old one %v %q", schema, a.Supported, a.Reason, old.Supported, old.Reason)
		}
		s, err := got.checkedSchema()
		olds, oldErr := oldCheckSchema(want.inputSchema)
		if oldErr == nil && (err != nil || !sameSchema(s, olds)) {
			t.Fatalf("the schema of %q = %+v, %v; checked again: %+v, %v", schema, s, err, olds, oldErr)
		}
	})
}

func FuzzValidateDifferential(f *testing.F) {
	const schema = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},"e":{"type":"string","enum":["open","closed"]},"h":{"type":"string","x-mcp-header":"H"}},"required":["q"]}`
	for _, args := range []string{`{"q":"x","i":3.0,"e":"open","h":"v"}`, `{"q":null}`, `{"q":"x","q":"y"}`, `{"q":"\u00e9"}`,
		`{"q":"x","zz":1}`, `{}`, `[]`, `{"q":"x","i":1e400}`, `{"q":"x","n":"1","q":1}`, `{"q":1,"n":"1"}`} {
		f.Add([]byte(schema), []byte(args))
	}
	for _, s := range diffSeeds {
		f.Add([]byte(s), []byte(`{"x":"a","r":1}`))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		s, err := CheckSchema(schema)
		if _, oldErr := oldCheckSchema(schema); err != nil || oldErr != nil {
			return
		}
		if got, want := s.Validate(args), oldValidate(s, args); errText(got) != errText(want) {
			t.Fatalf("Validate(%q) = %v, the old one %v", args, got, want)
		}
	})
}

// TestDifferentialNesting covers encoding/json's syntax depth limit, which
// fuzzing would not reach.
func TestDifferentialNesting(t *testing.T) {
	for _, depth := range []int{10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			close := map[string]string{"[": "]", `{"a":`: "}"}[open]
			inner := map[string]string{"[": "", `{"a":`: "1"}[open]
			in := []byte(strings.Repeat(open, depth) + inner + strings.Repeat(close, depth))
			_, err := Canonicalize(in)
			_, oldErr := oldCanonicalize(in)
			if errText(err) != errText(oldErr) {
				t.Errorf("Canonicalize(%d × %s) = %v, the old reader %v", depth, open, err, oldErr)
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func sameSchema(a, b Schema) bool {
	if !bytes.Equal(a.canonical, b.canonical) || len(a.props) != len(b.props) {
		return false
	}
	for i := range a.props {
		p, q := a.props[i], b.props[i]
		if p.name != q.name || p.typ != q.typ || p.required != q.required || p.header != q.header ||
			strings.Join(p.Enum(), "\x00") != strings.Join(q.Enum(), "\x00") || (p.Enum() == nil) != (q.Enum() == nil) ||
			p.nullOK != q.nullOK {
			return false
		}
	}
	return true
}
