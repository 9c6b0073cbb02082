package tool

// ruleKeywords are the node indexes of a property schema's keywords, -1
// when absent.
type ruleKeywords struct {
	typ, enum, cnst, header, ref, anyOf, dflt      int
	minimum, maximum, exclMin, exclMax, multipleOf int
	minLength, maxLength, pattern, format          int
	anyOfKey                                       string // "anyOf" or "oneOf"
}

// annotation reports whether key is an annotation keyword, which changes
// nothing that is validated, and, when v is not of the type it must have,
// that type ("a string"): the types are checked so the admin's view of
// them is what they say.
func (p *parser) annotation(key []byte, v int) (bool, string) {
	k := p.nodes[v].kind
	switch string(key) {
	case "title", "description", "$comment":
		if k != kindString {
			return true, "a string"
		}
		return true, ""
	case "deprecated", "readOnly", "writeOnly":
		if k != kindBool {
			return true, "a boolean"
		}
		return true, ""
	case "examples":
		if k != kindArray {
			return true, "an array"
		}
		return true, ""
	}
	return false, ""
}

// keywords collects the keywords of property schema n, refusing unknown
// ones and annotations of the wrong type. name is the property's name.
func (p *parser) keywords(n int, sc schemaScope, name string) (ruleKeywords, *UnsupportedError) {
	kw := ruleKeywords{typ: -1, enum: -1, cnst: -1, header: -1, ref: -1, anyOf: -1, dflt: -1,
		minimum: -1, maximum: -1, exclMin: -1, exclMax: -1, multipleOf: -1,
		minLength: -1, maxLength: -1, pattern: -1, format: -1}
	// An object or array type is named as such, whatever keywords of
	// its own come first (zod 4 writes propertyNames before type).
	if t := p.get(n, "type"); t >= 0 {
		if p.is(t, "object") || p.is(t, "array") {
			_, err := p.scalarType(t, name)
			return kw, err
		}
	}
	for j := range p.nodes[n].n {
		mk, mv := p.member(n, j, sc.sorted)
		// key stays bytes: a string of it would be an allocation per
		// keyword of every schema of a discovery.
		key := p.str(mk)
		if ok, want := p.annotation(key, mv); ok {
			if want != "" {
				return kw, unsupported(string(key) + " of property " + name + " is not " + want)
			}
			continue
		}
		slot := kw.slot(key)
		switch {
		case slot != nil:
			*slot = mv
		case string(key) == "anyOf" || string(key) == "oneOf":
			if kw.anyOf >= 0 {
				return kw, unsupported("anyOf and oneOf together in property " + name)
			}
			kw.anyOf, kw.anyOfKey = mv, string(key)
		case objectKeywords[string(key)]:
			return kw, unsupported("nested object in property " + name)
		default:
			return kw, unsupported(keywordReason(string(key), name))
		}
	}
	return kw, nil
}

// objectKeywords only apply to objects: a property that uses one is a
// nested object.
var objectKeywords = map[string]bool{
	"properties": true, "additionalProperties": true, "patternProperties": true, "required": true,
	"propertyNames": true, "minProperties": true, "maxProperties": true, "dependentRequired": true,
	"dependentSchemas": true, "unevaluatedProperties": true,
}

// slot is the field of the keyword key, or nil.
func (kw *ruleKeywords) slot(key []byte) *int {
	switch string(key) {
	case "type":
		return &kw.typ
	case "enum":
		return &kw.enum
	case "const":
		return &kw.cnst
	case headerKeyword:
		return &kw.header
	case "$ref":
		return &kw.ref
	case "default":
		return &kw.dflt
	case "minimum":
		return &kw.minimum
	case "maximum":
		return &kw.maximum
	case "exclusiveMinimum":
		return &kw.exclMin
	case "exclusiveMaximum":
		return &kw.exclMax
	case "multipleOf":
		return &kw.multipleOf
	case "minLength":
		return &kw.minLength
	case "maxLength":
		return &kw.maxLength
	case "pattern":
		return &kw.pattern
	case "format":
		return &kw.format
	}
	return nil
}

// constraint names the first keyword that constrains a value, or ""; only
// annotations may stand beside "$ref" or the nullable combinator.
func (kw ruleKeywords) constraint() string {
	for _, c := range []struct {
		key string
		n   int
	}{{"type", kw.typ}, {"enum", kw.enum}, {"const", kw.cnst}, {"minimum", kw.minimum}, {"maximum", kw.maximum},
		{"exclusiveMinimum", kw.exclMin}, {"exclusiveMaximum", kw.exclMax}, {"multipleOf", kw.multipleOf},
		{"minLength", kw.minLength}, {"maxLength", kw.maxLength}, {"pattern", kw.pattern}, {"format", kw.format}} {
		if c.n >= 0 {
			return c.key
		}
	}
	return ""
}
