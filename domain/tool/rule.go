package tool

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
)

// rule is what one flat scalar property accepts, with every local $ref and
// the nullable combinator form resolved: the canonical form that argument
// validation and the model-facing schema use. Every field is enforced by
// [parser.checkValue]; docs/schemas.md lists the keywords behind each.
type rule struct {
	typ    PropertyType
	nullOK bool // null is a valid value (the nullable forms)

	// choices are the non-null values of "enum" or "const"; nil when the
	// schema names none. isConst marks a "const".
	choices []scalar
	isConst bool

	// Numeric bounds (number and integer), nil when absent.
	minimum, maximum, exclMinimum, exclMaximum *float64
	// multipleOf as the schema wrote it (for exact decimal division) and
	// its value; "" when absent.
	multipleOf    string
	multipleOfNum float64

	// String rules. maxLength is the effective maximum: the schema's, or
	// limits.MaxArgumentStringLen when that is smaller or none is given.
	minLength, maxLength int
	pattern              *ecmaPattern // its String is the ECMA-262 source, as the model sees it
	format               string       // a format of knownFormats, enforced; "" when none
	unknownFormat        string       // a format we do not check (annotation), for the warning
}

// scalar is one enum or const value: a string, a number or a boolean.
type scalar struct {
	k   kind
	s   string
	num float64
	b   bool
}

func (v scalar) equal(w scalar) bool {
	if v.k != w.k {
		return false
	}
	switch v.k {
	case kindString:
		return v.s == w.s
	case kindNumber:
		return v.num == w.num
	}
	return v.b == w.b
}

// value is the scalar as a Go value for encoding/json.
func (v scalar) value() any {
	switch v.k {
	case kindString:
		return v.s
	case kindNumber:
		return jsonNumber(v.num)
	}
	return v.b
}

// schemaScope is what a property check needs of the whole schema: the
// root (for local references) and the member order of error reporting.
type schemaScope struct {
	root   int
	sorted bool
}

// Where a property schema sits: the property itself, the non-null branch
// of its nullable combinator, or the target of a local reference.
type ruleSite uint8

const (
	siteProperty ruleSite = iota
	siteBranch
	siteTarget
)

// rule checks property schema n (named name, for the reasons) and returns
// what it accepts, and the x-mcp-header node (-1 when none; only on the
// property itself).
func (p *parser) rule(n int, sc schemaScope, name string, site ruleSite) (rule, int, *UnsupportedError) {
	if p.nodes[n].kind != kindObject {
		return rule{}, -1, unsupported("property " + name + " is not a schema object")
	}
	kw, err := p.keywords(n, sc, name)
	if err != nil {
		return rule{}, -1, err
	}
	if kw.header >= 0 && site != siteProperty {
		return rule{}, -1, unsupported("x-mcp-header below the top of property " + name)
	}
	var r rule
	switch {
	case kw.ref >= 0:
		if site == siteTarget {
			return rule{}, -1, unsupported("reference to a reference in property " + name)
		}
		if c := kw.constraint(); c != "" || kw.anyOf >= 0 {
			return rule{}, -1, unsupported("keywords beside $ref in property " + name)
		}
		target, err := p.resolve(kw.ref, sc, name)
		if err != nil {
			return rule{}, -1, err
		}
		if r, _, err = p.rule(target, sc, name, siteTarget); err != nil {
			return rule{}, -1, err
		}
	case kw.anyOf >= 0:
		if site == siteBranch {
			return rule{}, -1, unsupported("combinator " + kw.anyOfKey + " inside " + kw.anyOfKey + " in property " + name)
		}
		if c := kw.constraint(); c != "" {
			return rule{}, -1, unsupported("keywords beside " + kw.anyOfKey + " in property " + name)
		}
		if r, err = p.nullable(kw, sc, name); err != nil {
			return rule{}, -1, err
		}
	default:
		if r, err = p.scalarRule(kw, name); err != nil {
			return rule{}, -1, err
		}
	}
	// The default of the property itself is checked by checkSchema, after
	// "required"; a default deeper down is checked here.
	if kw.dflt >= 0 && site != siteProperty {
		if reason := p.checkValue(&r, kw.dflt); reason != "" {
			return rule{}, -1, unsupported("default of property " + name + " " + reason)
		}
	}
	return r, kw.header, nil
}

// resolve returns the node a local reference points to: "#/$defs/NAME",
// "#/definitions/NAME" or "#/properties/NAME" of the root schema, with JSON Pointer escapes
// (~0, ~1) and the URI fragment's percent-encoding decoded. Nothing is
// ever fetched.
func (p *parser) resolve(ref int, sc schemaScope, name string) (int, *UnsupportedError) {
	if p.nodes[ref].kind != kindString {
		return -1, unsupported("$ref of property " + name + " is not a string")
	}
	s := string(p.str(ref))
	var section string
	switch {
	case strings.HasPrefix(s, "#/$defs/"):
		section = "$defs"
	case strings.HasPrefix(s, "#/definitions/"):
		section = "definitions"
	case strings.HasPrefix(s, "#/properties/"):
		// zod-to-json-schema refers to the first property that used a
		// schema shared by two (a reused enum, say).
		section = "properties"
	default:
		return -1, unsupported("reference that is not local to $defs, definitions or properties in property " + name)
	}
	token := s[len("#/"+section+"/"):]
	if strings.Contains(token, "/") {
		return -1, unsupported("reference below a definition in property " + name)
	}
	token, ok := unescapePointerToken(token)
	if !ok {
		return -1, unsupported("malformed reference in property " + name)
	}
	defs := p.get(sc.root, section)
	if defs < 0 || p.nodes[defs].kind != kindObject {
		return -1, unsupported("reference to a missing definition in property " + name)
	}
	target := p.get(defs, token)
	if target < 0 {
		return -1, unsupported("reference to a missing definition in property " + name)
	}
	return target, nil
}

// unescapePointerToken decodes a URI fragment's percent-encoding, then a
// JSON Pointer token's ~1 and ~0.
func unescapePointerToken(t string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '%' {
			if i+2 >= len(t) {
				return "", false
			}
			v, err := strconv.ParseUint(t[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	s := b.String()
	if !utf8.ValidString(s) {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || s[i+1] != '0' && s[i+1] != '1') {
			return "", false
		}
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~"), true
}

// nullable checks the generators' optional form: anyOf (or oneOf) of
// exactly one flat scalar schema and {"type": "null"}, in either order.
func (p *parser) nullable(kw ruleKeywords, sc schemaScope, name string) (rule, *UnsupportedError) {
	list := p.nodes[kw.anyOf]
	if list.kind != kindArray || list.n != 2 {
		return rule{}, unsupported("combinator " + kw.anyOfKey + " other than a nullable scalar in property " + name)
	}
	a, b := p.kids[list.lo], p.kids[list.lo+1]
	if !p.isNullSchema(a, sc) {
		a, b = b, a
	}
	if !p.isNullSchema(a, sc) || p.isNullSchema(b, sc) {
		return rule{}, unsupported("combinator " + kw.anyOfKey + " other than a nullable scalar in property " + name)
	}
	r, _, err := p.rule(b, sc, name, siteBranch)
	if err != nil {
		return rule{}, err
	}
	r.nullOK = true
	return r, nil
}

// isNullSchema reports {"type": "null"}, annotations allowed beside.
func (p *parser) isNullSchema(n int, sc schemaScope) bool {
	if p.nodes[n].kind != kindObject {
		return false
	}
	typed := false
	for j := range p.nodes[n].n {
		k, v := p.member(n, j, sc.sorted)
		key := p.str(k)
		if ok, want := p.annotation(key, v); ok && want == "" {
			continue
		}
		if string(key) != "type" || !p.is(v, "null") {
			return false
		}
		typed = true
	}
	return typed
}

// scalarRule checks a property schema without $ref or combinator: its
// type (one scalar type, or [T, "null"]), enum or const, and the
// constraints of that type.
func (p *parser) scalarRule(kw ruleKeywords, name string) (rule, *UnsupportedError) {
	var r rule
	typed, nullInType := false, false
	if kw.typ >= 0 {
		var err *UnsupportedError
		if r.typ, nullInType, err = p.ruleType(kw.typ, name); err != nil {
			return rule{}, err
		}
		typed = true
	}
	nullChoice := false
	if kw.enum >= 0 || kw.cnst >= 0 {
		var err *UnsupportedError
		if r.choices, nullChoice, err = p.choices(kw, name); err != nil {
			return rule{}, err
		}
		r.isConst = kw.cnst >= 0
		if !typed {
			if r.typ, err = inferType(r.choices, name); err != nil {
				return rule{}, err
			}
		} else {
			for _, c := range r.choices {
				if !typeAdmits(r.typ, c) {
					return rule{}, unsupported(choiceWord(kw) + " value of another type in property " + name)
				}
			}
			if nullChoice && !nullInType {
				return rule{}, unsupported(choiceWord(kw) + " value of another type in property " + name)
			}
		}
		// Without a type, a null value in the enum makes null valid; with
		// [T, "null"], null must be both in the type and in the enum.
		r.nullOK = nullChoice
	} else {
		if !typed {
			return rule{}, unsupported("untyped property " + name)
		}
		r.nullOK = nullInType
	}
	if err := p.numericRule(&r, kw, name); err != nil {
		return rule{}, err
	}
	if err := p.stringRule(&r, kw, name); err != nil {
		return rule{}, err
	}
	return r, nil
}

func choiceWord(kw ruleKeywords) string {
	if kw.cnst >= 0 {
		return "const"
	}
	return "enum"
}

// ruleType reads "type": one of string, number, integer, boolean, or an
// array of one of them and "null".
func (p *parser) ruleType(n int, name string) (PropertyType, bool, *UnsupportedError) {
	nd := p.nodes[n]
	if nd.kind == kindString {
		t, err := p.scalarType(n, name)
		return t, false, err
	}
	if nd.kind != kindArray {
		return PropertyType{}, false, unsupported("type of property " + name + " is not a string")
	}
	var t PropertyType
	null := false
	for j := range nd.n {
		v := p.kids[nd.lo+j]
		switch {
		case p.nodes[v].kind != kindString:
			return PropertyType{}, false, unsupported("type of property " + name + " is not a string")
		case p.is(v, "null"):
			if null {
				return PropertyType{}, false, unsupported("duplicate type in property " + name)
			}
			null = true
		case t != PropertyType{}:
			return PropertyType{}, false, unsupported("type union in property " + name)
		default:
			var err *UnsupportedError
			if t, err = p.scalarType(v, name); err != nil {
				return PropertyType{}, false, err
			}
		}
	}
	if t == (PropertyType{}) {
		return PropertyType{}, false, unsupported("type null in property " + name)
	}
	return t, null, nil
}

func (p *parser) scalarType(n int, name string) (PropertyType, *UnsupportedError) {
	switch t := p.str(n); string(t) {
	case "string":
		return TypeString, nil
	case "number":
		return TypeNumber, nil
	case "integer":
		return TypeInteger, nil
	case "boolean":
		return TypeBoolean, nil
	case "object":
		return PropertyType{}, unsupported("nested object in property " + name)
	case "array":
		return PropertyType{}, unsupported("array in property " + name)
	case "null":
		return PropertyType{}, unsupported("type null in property " + name)
	default:
		return PropertyType{}, unsupported("type " + orUnknown(safeWord(string(t))) + " in property " + name)
	}
}

// choices reads "enum" (or "const", one value): distinct scalars, strings
// of plain text no longer than the argument cap. null is reported apart.
func (p *parser) choices(kw ruleKeywords, name string) ([]scalar, bool, *UnsupportedError) {
	if kw.enum >= 0 && kw.cnst >= 0 {
		return nil, false, unsupported("enum and const together in property " + name)
	}
	word := choiceWord(kw)
	var values []int
	if kw.cnst >= 0 {
		values = []int{kw.cnst}
	} else {
		en := p.nodes[kw.enum]
		if en.kind != kindArray {
			return nil, false, unsupported("enum of property " + name + " is not an array")
		}
		if en.n == 0 {
			return nil, false, unsupported("empty enum in property " + name)
		}
		if en.n > limits.MaxEnumValues {
			return nil, false, unsupported("more than " + strconv.Itoa(limits.MaxEnumValues) + " enum values in property " + name)
		}
		values = p.kids[en.lo : en.lo+en.n]
	}
	out := make([]scalar, 0, len(values))
	null := false
	for _, v := range values {
		nd := &p.nodes[v]
		var c scalar
		switch nd.kind {
		case kindNull:
			if null {
				return nil, false, unsupported("duplicate enum value in property " + name)
			}
			null = true
			continue
		case kindString:
			s := p.str(v)
			if utf8.RuneCount(s) > limits.MaxArgumentStringLen {
				return nil, false, unsupported(word + " value too long in property " + name)
			}
			// Enum values reach the model in the tool's schema: hidden or
			// control characters there could smuggle instructions past the
			// admin, so such a value makes the schema unsupported.
			if !plainText(s) {
				return nil, false, unsupported(word + " value with invisible or control characters in property " + name)
			}
			c = scalar{k: kindString, s: string(s)}
		case kindNumber:
			c = scalar{k: kindNumber, num: nd.num}
		case kindBool:
			c = scalar{k: kindBool, b: nd.b}
		default:
			return nil, false, unsupported(word + " value that is not a scalar in property " + name)
		}
		if slices.ContainsFunc(out, c.equal) {
			return nil, false, unsupported("duplicate enum value in property " + name)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, false, unsupported(word + " of only null in property " + name)
	}
	return out, null, nil
}

// inferType is the type of an untyped enum or const: all its values must
// be of one JSON type.
func inferType(choices []scalar, name string) (PropertyType, *UnsupportedError) {
	k := choices[0].k
	for _, c := range choices[1:] {
		if c.k != k {
			return PropertyType{}, unsupported("enum of mixed types in property " + name)
		}
	}
	switch k {
	case kindString:
		return TypeString, nil
	case kindNumber:
		return TypeNumber, nil
	}
	return TypeBoolean, nil
}

func typeAdmits(t PropertyType, c scalar) bool {
	switch t {
	case TypeString:
		return c.k == kindString
	case TypeNumber:
		return c.k == kindNumber
	case TypeInteger:
		return c.k == kindNumber && c.num == math.Trunc(c.num)
	}
	return c.k == kindBool
}

// numericRule reads the bounds and multipleOf: numbers, on a number or
// integer property only; 2020-12's numeric exclusive bounds (draft 4's
// boolean form is refused).
func (p *parser) numericRule(r *rule, kw ruleKeywords, name string) *UnsupportedError {
	numeric := r.typ == TypeNumber || r.typ == TypeInteger
	for _, b := range []struct {
		key string
		n   int
		dst **float64
	}{{"minimum", kw.minimum, &r.minimum}, {"maximum", kw.maximum, &r.maximum},
		{"exclusiveMinimum", kw.exclMin, &r.exclMinimum}, {"exclusiveMaximum", kw.exclMax, &r.exclMaximum}} {
		if b.n < 0 {
			continue
		}
		switch {
		case !numeric:
			return unsupported(b.key + " on a property that is not a number in property " + name)
		case p.nodes[b.n].kind == kindBool:
			return unsupported("draft-4 boolean " + b.key + " in property " + name)
		case p.nodes[b.n].kind != kindNumber:
			return unsupported(b.key + " of property " + name + " is not a number")
		}
		v := p.nodes[b.n].num
		*b.dst = &v
	}
	if kw.multipleOf >= 0 {
		nd := p.nodes[kw.multipleOf]
		switch {
		case !numeric:
			return unsupported("multipleOf on a property that is not a number in property " + name)
		case nd.kind != kindNumber || nd.num <= 0:
			return unsupported("multipleOf of property " + name + " is not a positive number")
		}
		r.multipleOf, r.multipleOfNum = string(p.src[nd.lo:nd.hi]), nd.num
	}
	return nil
}

// stringRule reads minLength, maxLength, pattern and format, on a string
// property only.
func (p *parser) stringRule(r *rule, kw ruleKeywords, name string) *UnsupportedError {
	isString := r.typ == TypeString
	r.maxLength = limits.MaxArgumentStringLen
	for _, l := range []struct {
		key string
		n   int
		max bool
	}{{"minLength", kw.minLength, false}, {"maxLength", kw.maxLength, true}} {
		if l.n < 0 {
			continue
		}
		nd := p.nodes[l.n]
		switch {
		case !isString:
			return unsupported(l.key + " on a property that is not a string in property " + name)
		case nd.kind != kindNumber || nd.num < 0 || nd.num != math.Trunc(nd.num):
			return unsupported(l.key + " of property " + name + " is not a non-negative integer")
		}
		v := int(min(nd.num, math.MaxInt32))
		if l.max {
			r.maxLength = min(v, limits.MaxArgumentStringLen)
		} else {
			r.minLength = v
		}
	}
	if kw.pattern >= 0 {
		if !isString {
			return unsupported("pattern on a property that is not a string in property " + name)
		}
		if p.nodes[kw.pattern].kind != kindString {
			return unsupported("pattern of property " + name + " is not a string")
		}
		src := p.str(kw.pattern)
		// The pattern reaches the model in the tool's schema, as enum
		// values do: plain text of bounded length only.
		if utf8.RuneCount(src) > limits.MaxArgumentStringLen || !plainText(src) {
			return unsupported("pattern of property " + name + " is too long or holds invisible or control characters")
		}
		re, why := compileECMAPattern(string(src))
		if why != "" {
			return unsupported("pattern of property " + name + " " + why)
		}
		r.pattern = re
	}
	if kw.format >= 0 {
		if !isString {
			return unsupported("format on a property that is not a string in property " + name)
		}
		if p.nodes[kw.format].kind != kindString {
			return unsupported("format of property " + name + " is not a string")
		}
		f := string(p.str(kw.format))
		if _, ok := knownFormats[f]; ok {
			r.format = f
		} else {
			r.unknownFormat = orUnknown(safeWord(f))
		}
	}
	return nil
}

// Warnings are what the admin should know before allowlisting a tool
// whose schema is supported: calls that would always be blocked or
// refused, and formats that are not checked. They name properties (which
// passed the name rule) and formats only when they are plain words.
func (s Schema) Warnings() []string {
	var out []string
	for i := range s.props {
		p := &s.props[i]
		every := func() string {
			if p.required && !p.nullOK {
				return "every call is"
			}
			return "calls that set property " + p.name + " are"
		}
		switch {
		case p.format == "email":
			out = append(out, every()+" blocked: property "+p.name+" takes e-mail addresses, which are never sent")
		case p.admitsNoValue():
			out = append(out, every()+" refused: property "+p.name+" accepts no value")
		}
		if p.unknownFormat != "" {
			out = append(out, "format "+p.unknownFormat+" of property "+p.name+" is not checked")
		}
	}
	return out
}
