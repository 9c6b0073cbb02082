package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
)

// PropertyType is the JSON type of a supported property. The zero value is
// not a valid type; use the package variables.
type PropertyType struct {
	s string
}

// The property types a supported schema may use (MC4). A string enum is
// [TypeString] with a non-empty [Property.Enum].
var (
	TypeString  = PropertyType{"string"}
	TypeNumber  = PropertyType{"number"}
	TypeInteger = PropertyType{"integer"}
	TypeBoolean = PropertyType{"boolean"}
)

// String returns the JSON Schema type name.
func (t PropertyType) String() string { return t.s }

// Property is one top-level property of a supported schema.
type Property struct {
	name     string
	typ      PropertyType
	enum     []string
	required bool
}

// Name is the property name, matching ^[A-Za-z0-9_]+$.
func (p Property) Name() string { return p.name }

// Type is the property's JSON type.
func (p Property) Type() PropertyType { return p.typ }

// Enum returns a copy of the allowed values of a string enum, or nil.
func (p Property) Enum() []string { return append([]string(nil), p.enum...) }

// Required reports whether the schema lists the property in "required".
func (p Property) Required() bool { return p.required }

// Schema is a supported input schema: a flat object of scalar properties
// (MC4, MC5). Build it with [CheckSchema]. The zero value has no
// properties and accepts only the empty object.
type Schema struct {
	canonical []byte
	props     []Property // sorted by name
}

// Canonical returns a copy of the canonical form of the schema as the
// server sent it (titles, descriptions and defaults included).
func (s Schema) Canonical() json.RawMessage { return clone(s.canonical) }

// Properties returns the properties sorted by name.
func (s Schema) Properties() []Property {
	out := make([]Property, len(s.props))
	for i, p := range s.props {
		out[i] = p
		out[i].enum = p.Enum()
	}
	return out
}

func (s Schema) property(name string) (Property, bool) {
	i := sort.Search(len(s.props), func(i int) bool { return s.props[i].name >= name })
	if i < len(s.props) && s.props[i].name == name {
		return s.props[i], true
	}
	return Property{}, false
}

// CheckSchema accepts only the flat schemas the threat analysis allows
// (MC4): "type": "object" with at most [limits.MaxSchemaProperties]
// properties named ^[A-Za-z0-9_]+$, each of type string, number, integer or
// boolean, or a string enum of at most [limits.MaxEnumValues] distinct
// strings. Allowed besides:
//
//   - top level: "$schema" (a string), "title", "description" (strings),
//     "required" (distinct names of existing properties) and
//     "additionalProperties": false; a missing "properties" means none;
//   - per property: "title", "description" (strings; never shown to the
//     model), "enum" (with "type": "string" or without "type", all values
//     strings of at most [limits.MaxArgumentStringLen] characters), and
//     "default" if it is itself a valid argument for the property
//     (pydantic-based servers emit it for every optional parameter; it is
//     never shown to the model nor sent).
//
// Every other keyword is refused, including constraints we would not
// enforce ("format", "pattern", "minLength"…): a schema is either fully
// understood or unsupported. Errors are [*UnsupportedError].
func CheckSchema(raw json.RawMessage) (Schema, error) {
	root, err := parse(raw)
	if err != nil {
		return Schema{}, unsupported(jsonProblem(err))
	}
	if root.kind != kindObject {
		return Schema{}, unsupported("not an object")
	}
	var props, required *node
	sawType := false
	for _, m := range root.obj {
		switch m.key {
		case "type":
			if m.val.kind == kindArray {
				return Schema{}, unsupported("type union at top level")
			}
			if m.val.kind != kindString || m.val.str != "object" {
				return Schema{}, unsupported("top-level type is not object")
			}
			sawType = true
		case "properties":
			if m.val.kind != kindObject {
				return Schema{}, unsupported("properties is not an object")
			}
			props = m.val
		case "required":
			required = m.val
		case "additionalProperties":
			if m.val.kind != kindBool || m.val.b {
				return Schema{}, unsupported("additionalProperties other than false")
			}
		case "$schema", "title", "description":
			if m.val.kind != kindString {
				return Schema{}, unsupported(m.key + " is not a string")
			}
		default:
			return Schema{}, unsupported(keywordReason(m.key, ""))
		}
	}
	if !sawType {
		return Schema{}, unsupported("missing type object")
	}
	s := Schema{}
	if props != nil {
		if len(props.obj) > limits.MaxSchemaProperties {
			return Schema{}, unsupported("more than " + strconv.Itoa(limits.MaxSchemaProperties) + " properties")
		}
		for _, m := range props.obj {
			p, err := checkProperty(m.key, m.val)
			if err != nil {
				return Schema{}, err
			}
			s.props = append(s.props, p)
		}
	}
	sort.Slice(s.props, func(i, j int) bool { return s.props[i].name < s.props[j].name })
	if required != nil {
		if required.kind != kindArray {
			return Schema{}, unsupported("required is not an array")
		}
		seen := map[string]bool{}
		for _, r := range required.arr {
			if r.kind != kindString {
				return Schema{}, unsupported("required entry is not a string")
			}
			if seen[r.str] {
				return Schema{}, unsupported("duplicate required entry")
			}
			seen[r.str] = true
			i := sort.Search(len(s.props), func(i int) bool { return s.props[i].name >= r.str })
			if i == len(s.props) || s.props[i].name != r.str {
				return Schema{}, unsupported("required names a missing property")
			}
			s.props[i].required = true
		}
	}
	// Checked after "required" so defaults see the final property.
	for _, m := range propsOrEmpty(props) {
		if d := m.val.get("default"); d != nil {
			p, _ := s.property(m.key)
			if reason := p.check(d); reason != "" {
				return Schema{}, unsupported("default of property " + p.name + " " + reason)
			}
		}
	}
	var b bytes.Buffer
	root.write(&b)
	s.canonical = b.Bytes()
	return s, nil
}

func propsOrEmpty(n *node) []member {
	if n == nil {
		return nil
	}
	return n.obj
}

func keywordReason(key, prop string) string {
	where := ""
	if prop != "" {
		where = " in property " + prop
	}
	switch key {
	case "$ref", "$defs", "definitions":
		return "reference" + where
	case "oneOf", "anyOf", "allOf", "not", "if", "then", "else":
		return "combinator " + key + where
	case "items", "prefixItems", "additionalItems", "contains":
		return "array keyword " + key + where
	}
	if w := safeWord(key); w != "" {
		return "keyword " + w + where
	}
	return "unknown keyword" + where
}

// maxPropertyNameLen bounds a property name: names reach the model in
// the tool's schema and in argument errors.
const maxPropertyNameLen = 64

func validPropertyName(s string) bool {
	if s == "" || len(s) > maxPropertyNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func checkProperty(name string, n *node) (Property, error) {
	if !validPropertyName(name) {
		return Property{}, unsupported("property name not allowed")
	}
	if n.kind != kindObject {
		return Property{}, unsupported("property " + name + " is not a schema object")
	}
	p := Property{name: name}
	var typ, enum *node
	for _, m := range n.obj {
		switch m.key {
		case "type":
			typ = m.val
		case "enum":
			enum = m.val
		case "title", "description":
			if m.val.kind != kindString {
				return Property{}, unsupported(m.key + " of property " + name + " is not a string")
			}
		case "default":
			// Checked once the property is complete (CheckSchema).
		case "properties", "additionalProperties", "patternProperties", "required":
			return Property{}, unsupported("nested object in property " + name)
		default:
			return Property{}, unsupported(keywordReason(m.key, name))
		}
	}
	if typ != nil {
		switch {
		case typ.kind == kindArray:
			return Property{}, unsupported("type union in property " + name)
		case typ.kind != kindString:
			return Property{}, unsupported("type of property " + name + " is not a string")
		}
		switch typ.str {
		case "string":
			p.typ = TypeString
		case "number":
			p.typ = TypeNumber
		case "integer":
			p.typ = TypeInteger
		case "boolean":
			p.typ = TypeBoolean
		case "object":
			return Property{}, unsupported("nested object in property " + name)
		case "array":
			return Property{}, unsupported("array in property " + name)
		default:
			return Property{}, unsupported("type " + orUnknown(safeWord(typ.str)) + " in property " + name)
		}
	}
	if enum == nil {
		if typ == nil {
			return Property{}, unsupported("untyped property " + name)
		}
		return p, nil
	}
	// An enum without "type" is accepted when all values are strings: it
	// means the same as "type": "string" with that enum.
	if typ != nil && p.typ != TypeString {
		return Property{}, unsupported("enum of type " + p.typ.s + " in property " + name)
	}
	p.typ = TypeString
	if enum.kind != kindArray {
		return Property{}, unsupported("enum of property " + name + " is not an array")
	}
	if len(enum.arr) == 0 {
		return Property{}, unsupported("empty enum in property " + name)
	}
	if len(enum.arr) > limits.MaxEnumValues {
		return Property{}, unsupported("more than " + strconv.Itoa(limits.MaxEnumValues) + " enum values in property " + name)
	}
	seen := map[string]bool{}
	for _, v := range enum.arr {
		if v.kind != kindString {
			return Property{}, unsupported("non-string enum value in property " + name)
		}
		if utf8.RuneCountInString(v.str) > limits.MaxArgumentStringLen {
			return Property{}, unsupported("enum value too long in property " + name)
		}
		// Enum values reach the model in the tool's schema: hidden or
		// control characters there could smuggle instructions past the
		// admin, so such a value makes the schema unsupported.
		if SanitizeDescription(v.str) != strings.TrimSpace(v.str) || strings.ContainsAny(v.str, "\n\r\t") {
			return Property{}, unsupported("enum value with invisible or control characters in property " + name)
		}
		if seen[v.str] {
			return Property{}, unsupported("duplicate enum value in property " + name)
		}
		seen[v.str] = true
		p.enum = append(p.enum, v.str)
	}
	return p, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// check returns "" when v is a valid value of p, else the reason.
func (p Property) check(v *node) string {
	switch p.typ {
	case TypeString:
		if v.kind != kindString {
			return "must be a string"
		}
		if utf8.RuneCountInString(v.str) > limits.MaxArgumentStringLen {
			return "longer than " + strconv.Itoa(limits.MaxArgumentStringLen) + " characters"
		}
		if p.enum != nil && !contains(p.enum, v.str) {
			return "not one of the allowed values"
		}
	case TypeNumber:
		if v.kind != kindNumber {
			return "must be a number"
		}
	case TypeInteger:
		if v.kind != kindNumber || v.num != math.Trunc(v.num) {
			return "must be an integer"
		}
	case TypeBoolean:
		if v.kind != kindBool {
			return "must be a boolean"
		}
	default:
		return "has no type"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Validate checks tool-call arguments strictly, like a strict zod object:
// args must be one JSON object without duplicate keys, with no key the
// schema does not name, every required key present, every value of exactly
// its type (an integer is any number with an integral value, so 3.0 passes
// and 3.5 does not; null is no value of any type), enum values in their
// enum, and every string at most [limits.MaxArgumentStringLen] characters
// (runes after JSON decoding). Errors are [*ArgumentError] and never contain
// argument values or unknown keys.
func (s Schema) Validate(args json.RawMessage) error {
	root, err := parse(args)
	if err != nil {
		if errors.Is(err, ErrDuplicateKey) {
			return &ArgumentError{Reason: "duplicate argument"}
		}
		return &ArgumentError{Reason: "not valid JSON"}
	}
	if root.kind != kindObject {
		return &ArgumentError{Reason: "must be a JSON object"}
	}
	for _, m := range root.obj {
		p, ok := s.property(m.key)
		if !ok {
			return &ArgumentError{Reason: "unknown argument"}
		}
		if reason := p.check(m.val); reason != "" {
			return &ArgumentError{Field: p.name, Reason: reason}
		}
	}
	for _, p := range s.props {
		if p.required && root.get(p.name) == nil {
			return &ArgumentError{Field: p.name, Reason: "required"}
		}
	}
	return nil
}

// ModelSchema returns the schema offered to the model, in canonical form:
// type object, per property only "type" (plus "enum" for enums and
// "maxLength" [limits.MaxArgumentStringLen] for every string), "required"
// and "additionalProperties": false. Titles, descriptions and defaults are
// dropped because they are server-controlled text the admin did not write
// (MC4).
func (s Schema) ModelSchema() json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range s.props {
		prop := map[string]any{"type": p.typ.s}
		if p.typ == TypeString {
			prop["maxLength"] = limits.MaxArgumentStringLen
		}
		if p.enum != nil {
			prop["enum"] = p.enum
		}
		props[p.name] = prop
		if p.required {
			required = append(required, p.name)
		}
	}
	raw, err := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	})
	if err != nil {
		panic("tool: marshal model schema: " + err.Error()) // only strings, ints, bools: cannot fail
	}
	out, err := Canonicalize(raw)
	if err != nil {
		panic("tool: canonicalize model schema: " + err.Error())
	}
	return out
}
