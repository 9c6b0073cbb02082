package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The validator differential: on every schema CheckSchema accepts,
// Validate must agree with santhosh-tekuri/jsonschema (a JSON Schema
// 2020-12 validator that passes the official test suite) about which
// arguments are valid. The oracle reads the schema with
// "additionalProperties": false added, since Validate refuses unknown
// arguments whatever the schema says (strict, like a zod object).
//
// The differences that are ours by design, and only these, are allowed:
//   - Validate refuses strings longer than limits.MaxArgumentStringLen
//     whatever maxLength says;
//   - Validate checks the formats of docs/schemas.md (the oracle treats
//     format as an annotation, as 2020-12 does by default);
//   - numbers are IEEE 754 doubles (as in the canonical form), so values
//     beyond 2^53 may compare differently from the oracle's exact ones.
//
// Patterns: the oracle is given the same ECMA-262 translation
// (compileECMAPattern), whose meaning the table tests pin; the
// differential is about everything around it.

func FuzzValidateAgainstValidator(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991}},"required":["n"]}`,
		`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":10,"multipleOf":0.5}}}`,
		`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+\\d?$"}}}`,
		`{"type":"object","properties":{"e":{"type":"integer","enum":[1,2,3]},"c":{"const":"x"},"b":{"type":"boolean","const":true}}}`,
		`{"type":"object","properties":{"o":{"anyOf":[{"type":"integer","minimum":1},{"type":"null"}],"default":null},"t":{"type":["string","null"],"maxLength":3}}}`,
		`{"type":"object","$defs":{"C":{"type":"string","enum":["red","green"]}},"properties":{"c":{"$ref":"#/$defs/C"},"d":{"oneOf":[{"type":"null"},{"$ref":"#/$defs/C"}]}}}`,
		`{"type":"object","definitions":{"N":{"type":"number","multipleOf":3}},"properties":{"n":{"$ref":"#/definitions/N"}}}`,
		`{"type":"object","properties":{"u":{"enum":["a",null]},"v":{"type":["string","null"],"enum":["a"]},"w":{"enum":[1.5,2]}}}`,
		`{"type":"object","properties":{"q":{"type":"string"},"i":{"type":"integer"},"x":{"type":"number"},"f":{"type":"boolean"}},"required":["q"]}`,
	}
	args := []string{`{}`, `{"n":3}`, `{"n":3.5}`, `{"n":1e16}`, `{"n":null}`, `{"n":"3"}`, `{"n":0}`, `{"n":10}`, `{"n":9.5}`,
		`{"s":"ab"}`, `{"s":"a"}`, `{"s":"abcdef"}`, `{"s":"ab1"}`, `{"s":"AB"}`, `{"e":2}`, `{"e":4}`, `{"c":"x"}`, `{"c":"y"}`,
		`{"b":false}`, `{"o":null}`, `{"o":0}`, `{"t":null}`, `{"t":"abcd"}`, `{"c":"red"}`, `{"d":null}`, `{"d":"blue"}`,
		`{"u":null}`, `{"v":null}`, `{"w":1}`, `{"q":"x","zz":1}`, `{"q":"x","i":2.0,"x":-0,"f":true}`, `[]`, `{"q":1}`}
	for _, s := range schemas {
		for _, a := range args {
			f.Add([]byte(s), []byte(a))
		}
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		s, err := CheckSchema(schema)
		if err != nil {
			return
		}
		got := s.Validate(args)
		var ae *ArgumentError
		if errors.As(got, &ae) && (ae.Reason == "duplicate argument" || ae.Reason == "not valid JSON") {
			return
		}
		oracle, err := oracleSchema(schema)
		if err != nil {
			t.Fatalf("the validator cannot compile an accepted schema %s: %v", schema, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			t.Fatalf("the validator cannot read arguments %s that Validate read: %v", args, err)
		}
		want := oracle.Validate(inst)
		if (got == nil) == (want == nil) || allowedDifference(got, args) {
			return
		}
		t.Fatalf("schema %s, arguments %s: Validate = %v, the validator: %v", schema, args, got, want)
	})
}

// oracleSchema compiles schema for the validator as a 2020-12 schema with
// "additionalProperties": false, its "$schema" removed (the validator
// would load any draft it names) and patterns read as Validate reads them.
func oracleSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	delete(m, "$schema")
	m["additionalProperties"] = false
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(func(src string) (jsonschema.Regexp, error) {
		re, why := compileECMAPattern(src)
		if why != "" {
			return nil, errors.New(why)
		}
		return re, nil
	})
	if err := c.AddResource("args.json", m); err != nil {
		return nil, err
	}
	return c.Compile("args.json")
}

// allowedDifference reports the documented differences: the length cap,
// formats, and doubles beyond 2^53.
func allowedDifference(got error, args []byte) bool {
	var ae *ArgumentError
	if got != nil && errors.As(got, &ae) &&
		(strings.HasPrefix(ae.Reason, "is not a valid ") || ae.Reason == "longer than 500 characters") {
		return true
	}
	var values map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&values) != nil {
		return false
	}
	for _, v := range values {
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil && math.Abs(f) > 1<<53 {
				return true
			}
		}
	}
	return false
}

// TestValidateAgainstValidatorOnCorpus runs the differential on every
// supported schema of the corpus (testdata/schemas) with its listed
// arguments, so each generator's real output is checked against the
// validator too.
func TestValidateAgainstValidatorOnCorpus(t *testing.T) {
	for _, file := range corpusFiles(t) {
		for _, c := range readCorpus(t, file).Cases {
			if !c.Supported {
				continue
			}
			s, err := CheckSchema(c.Schema)
			if err != nil {
				t.Errorf("%s %s: %v", file, c.Idiom, err)
				continue
			}
			oracle, err := oracleSchema(c.Schema)
			if err != nil {
				t.Errorf("%s %s: the validator cannot compile it: %v", file, c.Idiom, err)
				continue
			}
			for _, a := range append(append([]json.RawMessage{}, c.Valid...), c.Invalid...) {
				got := s.Validate(a)
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(a))
				if err != nil {
					t.Fatal(err)
				}
				if want := oracle.Validate(inst); (got == nil) != (want == nil) && !allowedDifference(got, a) {
					t.Errorf("%s %s, arguments %s: Validate = %v, the validator: %v", file, c.Idiom, a, got, want)
				}
			}
		}
	}
}
