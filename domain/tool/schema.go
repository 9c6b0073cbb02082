package tool

import (
	"encoding/json"
	"math"
	"slices"
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
	header   string
}

// Name is the property name, matching ^[A-Za-z0-9_]+$.
func (p Property) Name() string { return p.name }

// Type is the property's JSON type.
func (p Property) Type() PropertyType { return p.typ }

// Enum returns a copy of the allowed values of a string enum, or nil.
func (p Property) Enum() []string { return append([]string(nil), p.enum...) }

// Required reports whether the schema lists the property in "required".
func (p Property) Required() bool { return p.required }

// Header is the property's x-mcp-header: the name of the HTTP header
// (after the prefix Mcp-Param-) in which a client of protocol 2026-07-28
// also sends the argument; empty when the schema names none.
func (p Property) Header() string { return p.header }

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

// find returns the index of the property named name, or -1.
func (s Schema) find(name []byte) int {
	i, ok := slices.BinarySearchFunc(s.props, name, func(q Property, name []byte) int {
		// Comparisons with string(name) do not copy name.
		switch {
		case q.name < string(name):
			return -1
		case q.name > string(name):
			return 1
		}
		return 0
	})
	if !ok {
		return -1
	}
	return i
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
//     strings of at most [limits.MaxArgumentStringLen] characters),
//     "default" if it is itself a valid argument for the property
//     (pydantic-based servers emit it for every optional parameter; it is
//     never shown to the model nor sent), and "x-mcp-header" (protocol
//     2026-07-28: the client also sends the argument as the HTTP header
//     Mcp-Param-<name>) under the go-sdk's rules: on a property whose
//     "type" is string, integer or boolean, a non-empty HTTP token
//     (RFC 9110 tchar), no two properties naming the same header
//     case-insensitively. The value is part of the canonical schema, so
//     the pinning hash covers it.
//
// Every other keyword is refused, including constraints we would not
// enforce ("format", "pattern", "minLength"…): a schema is either fully
// understood or unsupported. Errors are [*UnsupportedError].
func CheckSchema(raw json.RawMessage) (Schema, error) {
	p := getParser()
	defer p.release()
	root, fail := p.parse(raw)
	if fail.code != failNone {
		return Schema{}, unsupported(fail.problem())
	}
	s, uerr := p.checkSchema(root, false)
	if uerr != nil {
		return Schema{}, uerr
	}
	s.canonical = p.canonical(root)
	return s, nil
}

// checkSchema is [CheckSchema] on a parsed tree. It reports the first
// problem in the order of the members, either as the input has them
// (CheckSchema on raw bytes) or sorted as in the canonical form (a
// definition, whose schema was always checked in canonical form).
func (p *parser) checkSchema(root int, sorted bool) (Schema, *UnsupportedError) {
	if p.nodes[root].kind != kindObject {
		return Schema{}, unsupported("not an object")
	}
	props, required := -1, -1
	sawType := false
	for j := range p.nodes[root].n {
		k, v := p.member(root, j, sorted)
		vk := p.nodes[v].kind
		switch key := p.str(k); string(key) {
		case "type":
			if vk == kindArray {
				return Schema{}, unsupported("type union at top level")
			}
			if !p.is(v, "object") {
				return Schema{}, unsupported("top-level type is not object")
			}
			sawType = true
		case "properties":
			if vk != kindObject {
				return Schema{}, unsupported("properties is not an object")
			}
			props = v
		case "required":
			required = v
		case "additionalProperties":
			if vk != kindBool || p.nodes[v].b {
				return Schema{}, unsupported("additionalProperties other than false")
			}
		case "$schema", "title", "description":
			if vk != kindString {
				return Schema{}, unsupported(string(key) + " is not a string")
			}
		default:
			return Schema{}, unsupported(keywordReason(string(key), ""))
		}
	}
	if !sawType {
		return Schema{}, unsupported("missing type object")
	}
	s := Schema{}
	if props >= 0 {
		n := p.nodes[props].n
		if n > limits.MaxSchemaProperties {
			return Schema{}, unsupported("more than " + strconv.Itoa(limits.MaxSchemaProperties) + " properties")
		}
		s.props = make([]Property, 0, n)
		for j := range n {
			k, v := p.member(props, j, sorted)
			prop, err := p.checkProperty(k, v, sorted)
			if err != nil {
				return Schema{}, err
			}
			if prop.header != "" {
				for _, q := range s.props {
					if strings.EqualFold(q.header, prop.header) {
						return Schema{}, unsupported("duplicate x-mcp-header in property " + prop.name)
					}
				}
			}
			s.props = append(s.props, prop)
		}
	}
	slices.SortFunc(s.props, func(a, b Property) int { return strings.Compare(a.name, b.name) })
	if required >= 0 {
		if err := p.markRequired(&s, required); err != nil {
			return Schema{}, err
		}
	}
	// Checked after "required" so defaults see the final property.
	if props >= 0 {
		for j := range p.nodes[props].n {
			k, v := p.member(props, j, sorted)
			if d := p.get(v, "default"); d >= 0 {
				prop := s.props[s.find(p.str(k))]
				if reason := p.check(prop, d); reason != "" {
					return Schema{}, unsupported("default of property " + prop.name + " " + reason)
				}
			}
		}
	}
	return s, nil
}

// markRequired checks "required" (distinct names of existing properties)
// and marks those properties.
func (p *parser) markRequired(s *Schema, required int) *UnsupportedError {
	nd := p.nodes[required]
	if nd.kind != kindArray {
		return unsupported("required is not an array")
	}
	for j := range nd.n {
		r := p.kids[nd.lo+j]
		if p.nodes[r].kind != kindString {
			return unsupported("required entry is not a string")
		}
		name := p.str(r)
		// Every earlier entry named a distinct property: at most
		// MaxSchemaProperties to compare with.
		for _, q := range p.kids[nd.lo : nd.lo+j] {
			if string(p.str(q)) == string(name) {
				return unsupported("duplicate required entry")
			}
		}
		i := s.find(name)
		if i < 0 {
			return unsupported("required names a missing property")
		}
		s.props[i].required = true
	}
	return nil
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

func validPropertyName(s []byte) bool {
	if len(s) == 0 || len(s) > maxPropertyNameLen {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// headerKeyword is the property keyword of protocol 2026-07-28 that
// mirrors an argument into an HTTP header.
const headerKeyword = "x-mcp-header"

func (p *parser) checkProperty(k, n int, sorted bool) (Property, *UnsupportedError) {
	if !validPropertyName(p.str(k)) {
		return Property{}, unsupported("property name not allowed")
	}
	name := string(p.str(k))
	if p.nodes[n].kind != kindObject {
		return Property{}, unsupported("property " + name + " is not a schema object")
	}
	prop := Property{name: name}
	typ, enum, header := -1, -1, -1
	for j := range p.nodes[n].n {
		mk, mv := p.member(n, j, sorted)
		switch key := p.str(mk); string(key) {
		case "type":
			typ = mv
		case "enum":
			enum = mv
		case headerKeyword:
			header = mv
		case "title", "description":
			if p.nodes[mv].kind != kindString {
				return Property{}, unsupported(string(key) + " of property " + name + " is not a string")
			}
		case "default":
			// Checked once the property is complete (checkSchema).
		case "properties", "additionalProperties", "patternProperties", "required":
			return Property{}, unsupported("nested object in property " + name)
		default:
			return Property{}, unsupported(keywordReason(string(key), name))
		}
	}
	if typ >= 0 {
		switch {
		case p.nodes[typ].kind == kindArray:
			return Property{}, unsupported("type union in property " + name)
		case p.nodes[typ].kind != kindString:
			return Property{}, unsupported("type of property " + name + " is not a string")
		}
		switch t := p.str(typ); string(t) {
		case "string":
			prop.typ = TypeString
		case "number":
			prop.typ = TypeNumber
		case "integer":
			prop.typ = TypeInteger
		case "boolean":
			prop.typ = TypeBoolean
		case "object":
			return Property{}, unsupported("nested object in property " + name)
		case "array":
			return Property{}, unsupported("array in property " + name)
		default:
			return Property{}, unsupported("type " + orUnknown(safeWord(string(t))) + " in property " + name)
		}
	}
	if header >= 0 {
		h, err := p.checkHeader(header, typ >= 0, prop)
		if err != nil {
			return Property{}, err
		}
		prop.header = h
	}
	if enum < 0 {
		if typ < 0 {
			return Property{}, unsupported("untyped property " + name)
		}
		return prop, nil
	}
	// An enum without "type" is accepted when all values are strings: it
	// means the same as "type": "string" with that enum.
	if typ >= 0 && prop.typ != TypeString {
		return Property{}, unsupported("enum of type " + prop.typ.s + " in property " + name)
	}
	prop.typ = TypeString
	en := p.nodes[enum]
	if en.kind != kindArray {
		return Property{}, unsupported("enum of property " + name + " is not an array")
	}
	if en.n == 0 {
		return Property{}, unsupported("empty enum in property " + name)
	}
	if en.n > limits.MaxEnumValues {
		return Property{}, unsupported("more than " + strconv.Itoa(limits.MaxEnumValues) + " enum values in property " + name)
	}
	prop.enum = make([]string, 0, en.n)
	for j := range en.n {
		v := p.kids[en.lo+j]
		if p.nodes[v].kind != kindString {
			return Property{}, unsupported("non-string enum value in property " + name)
		}
		s := p.str(v)
		if utf8.RuneCount(s) > limits.MaxArgumentStringLen {
			return Property{}, unsupported("enum value too long in property " + name)
		}
		// Enum values reach the model in the tool's schema: hidden or
		// control characters there could smuggle instructions past the
		// admin, so such a value makes the schema unsupported.
		if !plainText(s) {
			return Property{}, unsupported("enum value with invisible or control characters in property " + name)
		}
		if slices.Contains(prop.enum, string(s)) {
			return Property{}, unsupported("duplicate enum value in property " + name)
		}
		prop.enum = append(prop.enum, string(s))
	}
	return prop, nil
}

// plainText reports whether s is what [SanitizeDescription] leaves as
// [strings.TrimSpace] would (no invisible characters) and holds no
// newline, carriage return or tab. Printable ASCII always is; only other
// text is converted and checked.
func plainText(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f {
			str := string(s)
			return SanitizeDescription(str) == strings.TrimSpace(str) && !strings.ContainsAny(str, "\n\r\t")
		}
	}
	return true
}

// checkHeader applies the go-sdk's rules for x-mcp-header (the client
// leaves out of tools/list any tool that breaks them): an explicit type
// string, integer or boolean; a non-empty string of HTTP token characters.
// The reasons name the property, never the header text.
func (p *parser) checkHeader(h int, typed bool, prop Property) (string, *UnsupportedError) {
	if !typed || prop.typ != TypeString && prop.typ != TypeInteger && prop.typ != TypeBoolean {
		return "", unsupported("x-mcp-header on a property that is not of type string, integer or boolean in property " + prop.name)
	}
	if p.nodes[h].kind != kindString || len(p.str(h)) == 0 {
		return "", unsupported("x-mcp-header of property " + prop.name + " is not a non-empty string")
	}
	for _, c := range p.str(h) {
		if !isTokenChar(c) {
			return "", unsupported("x-mcp-header of property " + prop.name + " is not a valid header name")
		}
	}
	return string(p.str(h)), nil
}

// isTokenChar reports an RFC 9110 tchar: the characters of a header name.
func isTokenChar(c byte) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// check returns "" when node v is a valid value of prop, else the reason.
func (p *parser) check(prop Property, v int) string {
	nd := &p.nodes[v]
	switch prop.typ {
	case TypeString:
		if nd.kind != kindString {
			return "must be a string"
		}
		s := p.str(v)
		if utf8.RuneCount(s) > limits.MaxArgumentStringLen {
			return "longer than " + strconv.Itoa(limits.MaxArgumentStringLen) + " characters"
		}
		if prop.enum != nil && !slices.Contains(prop.enum, string(s)) {
			return "not one of the allowed values"
		}
	case TypeNumber:
		if nd.kind != kindNumber {
			return "must be a number"
		}
	case TypeInteger:
		if nd.kind != kindNumber || nd.num != math.Trunc(nd.num) {
			return "must be an integer"
		}
	case TypeBoolean:
		if nd.kind != kindBool {
			return "must be a boolean"
		}
	default:
		return "has no type"
	}
	return ""
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
	p := getParser()
	defer p.release()
	root, fail := p.parse(args)
	switch fail.code {
	case failNone:
	case failDuplicate:
		return &ArgumentError{Reason: "duplicate argument"}
	default:
		return &ArgumentError{Reason: "not valid JSON"}
	}
	if p.nodes[root].kind != kindObject {
		return &ArgumentError{Reason: "must be a JSON object"}
	}
	for j := range p.nodes[root].n {
		k, v := p.member(root, j, false)
		i := s.find(p.str(k))
		if i < 0 {
			return &ArgumentError{Reason: "unknown argument"}
		}
		if reason := p.check(s.props[i], v); reason != "" {
			return &ArgumentError{Field: s.props[i].name, Reason: reason}
		}
	}
	for _, prop := range s.props {
		if prop.required && p.get(root, prop.name) < 0 {
			return &ArgumentError{Field: prop.name, Reason: "required"}
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
