package tool

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

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

// Property is one top-level property of a supported schema, with its
// local reference and nullable form resolved.
type Property struct {
	name     string
	required bool
	header   string
	rule
}

// Name is the property name, matching ^[A-Za-z0-9_]+$.
func (p Property) Name() string { return p.name }

// Type is the property's JSON type (null aside: see [Property.Nullable]).
func (p Property) Type() PropertyType { return p.typ }

// Nullable reports whether null is a valid value of the property.
func (p Property) Nullable() bool { return p.nullOK }

// Enum returns a copy of the allowed values of a string enum or const, or
// nil.
func (p Property) Enum() []string {
	if p.typ != TypeString || p.choices == nil {
		return nil
	}
	out := make([]string, len(p.choices))
	for i, c := range p.choices {
		out[i] = c.s
	}
	return out
}

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
		out[i].choices = slices.Clone(p.choices)
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
// properties named ^[A-Za-z0-9_]+$, each of type string, number, integer
// or boolean (alone or with "null"), constrained only by keywords the
// service enforces on every call: enum and const, numeric bounds and
// multipleOf, string lengths, pattern, the checked formats, local
// references, and the protocol's x-mcp-header. docs/schemas.md is the
// table of each keyword, what it means and what is refused. Every other
// keyword is refused: a schema is either fully understood or
// unsupported. Errors are [*UnsupportedError].
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
	props, required, err := p.topLevel(root, sorted)
	if err != nil {
		return Schema{}, err
	}
	s := Schema{}
	if props >= 0 {
		if s.props, err = p.properties(props, schemaScope{root: root, sorted: sorted}); err != nil {
			return Schema{}, err
		}
	}
	if required >= 0 {
		if err := p.markRequired(&s, required); err != nil {
			return Schema{}, err
		}
	}
	// Checked after "required" so defaults see the final property.
	if props >= 0 {
		if err := p.checkDefaults(&s, props, sorted); err != nil {
			return Schema{}, err
		}
	}
	return s, nil
}

// topLevel checks the keywords of the schema object and returns its
// "properties" and "required" nodes (-1 when absent).
func (p *parser) topLevel(root int, sorted bool) (props, required int, err *UnsupportedError) {
	props, required = -1, -1
	sawType := false
	for j := range p.nodes[root].n {
		k, v := p.member(root, j, sorted)
		vk := p.nodes[v].kind
		switch string(p.str(k)) {
		case "type":
			if vk == kindArray {
				return 0, 0, unsupported("type union at top level")
			}
			if !p.is(v, "object") {
				return 0, 0, unsupported("top-level type is not object")
			}
			sawType = true
		case "properties":
			if vk != kindObject {
				return 0, 0, unsupported("properties is not an object")
			}
			props = v
		case "required":
			required = v
		case "additionalProperties":
			// false, or true and {} (zod's passthrough and loose objects:
			// the server would take more). Arguments are validated
			// strictly either way: no unknown argument is ever sent.
			if !(vk == kindBool || vk == kindObject && p.nodes[v].n == 0) {
				return 0, 0, unsupported("additionalProperties other than false, true or {}")
			}
		default:
			if reason := p.annotationKeyword(string(p.str(k)), vk); reason != "" {
				return 0, 0, unsupported(reason)
			}
		}
	}
	if !sawType {
		return 0, 0, unsupported("missing type object")
	}
	return props, required, nil
}

// annotationKeyword is why a top-level keyword other than type,
// properties, required and additionalProperties is refused, or "".
func (p *parser) annotationKeyword(key string, vk kind) string {
	switch key {
	case "$schema", "title", "description", "$comment":
		if vk != kindString {
			return key + " is not a string"
		}
	case "$defs", "definitions":
		// Read only where a property refers to an entry (resolve).
		if vk != kindObject {
			return key + " is not an object"
		}
	default:
		return keywordReason(key, "")
	}
	return ""
}

// properties checks each property of the object props, sorted by name.
func (p *parser) properties(props int, sc schemaScope) ([]Property, *UnsupportedError) {
	n := p.nodes[props].n
	if n > limits.MaxSchemaProperties {
		return nil, unsupported("more than " + strconv.Itoa(limits.MaxSchemaProperties) + " properties")
	}
	out := make([]Property, 0, n)
	for j := range n {
		k, v := p.member(props, j, sc.sorted)
		prop, err := p.checkProperty(k, v, sc)
		if err != nil {
			return nil, err
		}
		if prop.header != "" && slices.ContainsFunc(out, func(q Property) bool { return strings.EqualFold(q.header, prop.header) }) {
			return nil, unsupported("duplicate x-mcp-header in property " + prop.name)
		}
		out = append(out, prop)
	}
	slices.SortFunc(out, func(a, b Property) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// checkDefaults checks each property's "default" against its rule.
func (p *parser) checkDefaults(s *Schema, props int, sorted bool) *UnsupportedError {
	for j := range p.nodes[props].n {
		k, v := p.member(props, j, sorted)
		if d := p.get(v, "default"); d >= 0 {
			prop := &s.props[s.find(p.str(k))]
			if reason := p.checkValue(&prop.rule, d); reason != "" {
				return unsupported("default of property " + prop.name + " " + reason)
			}
		}
	}
	return nil
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

func (p *parser) checkProperty(k, n int, sc schemaScope) (Property, *UnsupportedError) {
	if !validPropertyName(p.str(k)) {
		return Property{}, unsupported("property name not allowed")
	}
	name := string(p.str(k))
	r, header, err := p.rule(n, sc, name, siteProperty)
	if err != nil {
		return Property{}, err
	}
	prop := Property{name: name, rule: r}
	if header >= 0 {
		t := p.get(n, "type")
		h, err := p.checkHeader(header, t >= 0 && p.nodes[t].kind == kindString, prop)
		if err != nil {
			return Property{}, err
		}
		prop.header = h
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

// Check reads tool-call arguments once and checks them strictly, like a
// strict zod object: args must be one JSON object without duplicate keys,
// with no key the schema does not name, every required key present, every
// value of exactly its type (an integer is any number with an integral
// value, so 3.0 passes and 3.5 does not; null is no value of any type),
// enum values in their enum, and every string at most
// [limits.MaxArgumentStringLen] characters (runes after JSON decoding).
// Errors are [*ArgumentError] and never contain argument values or unknown
// keys; the Arguments returned with one hold only the hash and length.
func (s Schema) Check(args json.RawMessage) (Arguments, error) {
	p := getParser()
	defer p.release()
	root, fail := p.parse(args)
	switch fail.code {
	case failNone:
	case failDuplicate:
		return recordOf(args), &ArgumentError{Reason: "duplicate argument"}
	default:
		return recordOf(args), &ArgumentError{Reason: "not valid JSON"}
	}
	canonical := p.canonical(root)
	if err := s.check(p, root); err != nil {
		return recordOf(canonical), err
	}
	a := recordOf(canonical)
	a.canonical = canonical
	for j := range p.nodes[root].n {
		if _, v := p.member(root, j, true); p.nodes[v].kind == kindString {
			a.strings = append(a.strings, string(p.str(v)))
		}
	}
	return a, nil
}

// Validate is [Schema.Check] without its value.
func (s Schema) Validate(args json.RawMessage) error {
	_, err := s.Check(args)
	return err
}

// check applies the schema to the object at root.
func (s Schema) check(p *parser, root int) error {
	if p.nodes[root].kind != kindObject {
		return &ArgumentError{Reason: "must be a JSON object"}
	}
	for j := range p.nodes[root].n {
		k, v := p.member(root, j, false)
		i := s.find(p.str(k))
		if i < 0 {
			return &ArgumentError{Reason: "unknown argument"}
		}
		if reason := p.checkValue(&s.props[i].rule, v); reason != "" {
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
// type object, "required", "additionalProperties": false, and per
// property only what is enforced: "type" ([T, "null"] when null is
// valid), "maxLength" (the effective one, at most
// [limits.MaxArgumentStringLen], on every string), "minLength",
// "pattern", a checked "format", "enum" or "const", and the numeric
// bounds and "multipleOf". Local references are resolved. Titles,
// descriptions, defaults, examples and unchecked formats are dropped
// because they are server-controlled text the admin did not write (MC4).
func (s Schema) ModelSchema() json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range s.props {
		props[p.name] = p.rule.model()
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
		panic("tool: marshal model schema: " + err.Error()) // only strings, numbers, bools: cannot fail
	}
	out, err := Canonicalize(raw)
	if err != nil {
		panic("tool: canonicalize model schema: " + err.Error())
	}
	return out
}

// model is the rule as a JSON Schema of only the enforced keywords.
func (r rule) model() map[string]any {
	m := map[string]any{"type": r.typ.s}
	if r.nullOK {
		m["type"] = []string{r.typ.s, "null"}
	}
	if r.choices != nil {
		values := make([]any, 0, len(r.choices)+1)
		for _, c := range r.choices {
			values = append(values, c.value())
		}
		switch {
		case r.isConst && !r.nullOK:
			m["const"] = values[0]
		case r.nullOK:
			m["enum"] = append(values, nil)
		default:
			m["enum"] = values
		}
	}
	for key, v := range map[string]*float64{"minimum": r.minimum, "maximum": r.maximum,
		"exclusiveMinimum": r.exclMinimum, "exclusiveMaximum": r.exclMaximum} {
		if v != nil {
			m[key] = jsonNumber(*v)
		}
	}
	if r.multipleOf != "" {
		m["multipleOf"] = jsonNumber(r.multipleOfNum)
	}
	if r.typ == TypeString {
		m["maxLength"] = r.maxLength
		if r.minLength > 0 {
			m["minLength"] = r.minLength
		}
		if r.pattern != nil {
			m["pattern"] = r.pattern.String()
		}
		if r.format != "" {
			m["format"] = r.format
		}
	}
	return m
}

// jsonNumber is f in its canonical JSON form (RFC 8785).
func jsonNumber(f float64) json.Number { return json.Number(appendNumber(nil, f)) }
