package tool

// The reader, schema check and hash as they were before the one-pass
// reader (encoding/json's Decoder.Token, a pointer tree, a second parse
// for the schema check, a streaming SHA-256), kept as the oracle of the
// differential tests in differential_test.go. The only addition is the
// x-mcp-header rule, written here the go-sdk's way (a map of lower-cased
// names, rune-wise token check), so that the oracle covers the schemas
// the new reader accepts.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

func oldCanonicalize(raw []byte) ([]byte, error) {
	n, err := oldParse(raw)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes(), nil
}

// oldNode is a parsed JSON value. Objects keep their members in input order;
// only serialisation sorts them.
type oldNode struct {
	kind kind
	b    bool
	num  float64
	str  string
	arr  []*oldNode
	obj  []oldMember
}

type oldMember struct {
	key string
	val *oldNode
}

// get returns the oldMember named key, or nil.
func (n *oldNode) get(key string) *oldNode {
	for _, m := range n.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// parse checks raw and builds its tree. The standard library validates the
// syntax; the token stream then gives us keys one by one so duplicates and
// depth can be checked, which json.Unmarshal into a map would hide.
func oldParse(raw []byte) (*oldNode, error) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return nil, ErrInvalidJSON
	}
	if err := oldCheckSurrogates(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, ErrInvalidJSON
	}
	n, err := oldParseValue(dec, tok, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data", ErrInvalidJSON)
	}
	return n, nil
}

func oldParseValue(dec *json.Decoder, tok json.Token, depth int) (*oldNode, error) {
	switch t := tok.(type) {
	case nil:
		return &oldNode{kind: kindNull}, nil
	case bool:
		return &oldNode{kind: kindBool, b: t}, nil
	case string:
		return &oldNode{kind: kindString, str: t}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%w at offset %d", ErrNumberRange, dec.InputOffset())
		}
		return &oldNode{kind: kindNumber, num: f}, nil
	case json.Delim:
		if depth+1 > MaxJSONDepth {
			return nil, fmt.Errorf("%w (limit %d)", ErrTooDeep, MaxJSONDepth)
		}
		switch t {
		case '[':
			return oldParseArray(dec, depth+1)
		case '{':
			return oldParseObject(dec, depth+1)
		}
	}
	return nil, ErrInvalidJSON
}

func oldParseArray(dec *json.Decoder, depth int) (*oldNode, error) {
	n := &oldNode{kind: kindArray}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, ErrInvalidJSON
		}
		if d, ok := tok.(json.Delim); ok && d == ']' {
			return n, nil
		}
		v, err := oldParseValue(dec, tok, depth)
		if err != nil {
			return nil, err
		}
		n.arr = append(n.arr, v)
	}
}

func oldParseObject(dec *json.Decoder, depth int) (*oldNode, error) {
	n := &oldNode{kind: kindObject}
	seen := map[string]struct{}{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, ErrInvalidJSON
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return n, nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil, ErrInvalidJSON
		}
		if _, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w at offset %d", ErrDuplicateKey, dec.InputOffset())
		}
		seen[key] = struct{}{}
		tok, err = dec.Token()
		if err != nil {
			return nil, ErrInvalidJSON
		}
		v, err := oldParseValue(dec, tok, depth)
		if err != nil {
			return nil, err
		}
		n.obj = append(n.obj, oldMember{key: key, val: v})
	}
}

// checkSurrogates refuses \u escapes that do not form a valid UTF-16
// surrogate pair. encoding/json would silently turn them into U+FFFD, so
// "\ud800" and "\udc00" would canonicalise (and hash) alike. raw is already
// known to be valid JSON, so every backslash starts an escape in a string.
func oldCheckSurrogates(raw []byte) error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r := oldHex4(raw[i+2 : i+6])
		i += 5
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
			}
			lo := oldHex4(raw[i+3 : i+7])
			if lo < 0xdc00 || lo > 0xdfff {
				return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
			}
			i += 6
		case utf16.IsSurrogate(r):
			return fmt.Errorf("%w: lone surrogate", ErrInvalidJSON)
		}
	}
	return nil
}

func oldHex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b), 16, 16)
	return rune(v)
}

func (n *oldNode) write(b *bytes.Buffer) {
	switch n.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(n.b))
	case kindNumber:
		b.WriteString(oldFormatNumber(n.num))
	case kindString:
		oldWriteString(b, n.str)
	case kindArray:
		b.WriteByte('[')
		for i, v := range n.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	case kindObject:
		members := make([]oldMember, len(n.obj))
		copy(members, n.obj)
		oldSortMembers(members)
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			oldWriteString(b, m.key)
			b.WriteByte(':')
			m.val.write(b)
		}
		b.WriteByte('}')
	}
}

// sortMembers orders by UTF-16 code units, as RFC 8785 section 3.2.3 asks;
// Go's byte order differs from it for characters above U+FFFF versus
// U+E000–U+FFFF.
func oldSortMembers(ms []oldMember) {
	keys := make(map[string][]uint16, len(ms))
	for _, m := range ms {
		keys[m.key] = utf16.Encode([]rune(m.key))
	}
	sort.Slice(ms, func(i, j int) bool {
		a, b := keys[ms[i].key], keys[ms[j].key]
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
}

// writeString escapes only what RFC 8785 section 3.2.2.2 requires: the
// quote, the backslash and control characters. HTML characters, U+2028 and
// U+2029 stay literal, unlike encoding/json's default.
func oldWriteString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// formatNumber is ECMAScript's Number::toString (ECMA-262 section
// 6.1.6.1.20) as RFC 8785 section 3.2.2.3 prescribes: the shortest digits
// that round-trip, plain notation for exponents from -6 to 20, otherwise
// d.ddde±x. -0 becomes 0.
func oldFormatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits: d.dddde±XX.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k := len(digits)
	n := exp + 1 // ECMAScript's n: the decimal point sits after n digits.
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		e := n - 1
		es := "+"
		if e < 0 {
			es = "-"
			e = -e
		}
		out = digits[:1]
		if k > 1 {
			out += "." + digits[1:]
		}
		out += "e" + es + strconv.Itoa(e)
	}
	return sign + out
}

func oldCheckSchema(raw json.RawMessage) (Schema, error) {
	root, err := oldParse(raw)
	if err != nil {
		return Schema{}, unsupported(oldJSONProblem(err))
	}
	if root.kind != kindObject {
		return Schema{}, unsupported("not an object")
	}
	var props, required *oldNode
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
		seenHeaders := map[string]bool{} // the go-sdk's duplicate rule
		for _, m := range props.obj {
			p, err := oldCheckProperty(m.key, m.val)
			if err != nil {
				return Schema{}, err
			}
			if p.header != "" {
				if seenHeaders[strings.ToLower(p.header)] {
					return Schema{}, unsupported("duplicate x-mcp-header in property " + p.name)
				}
				seenHeaders[strings.ToLower(p.header)] = true
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
	for _, m := range oldPropsOrEmpty(props) {
		if d := m.val.get("default"); d != nil {
			p, _ := oldProperty(s, m.key)
			if reason := oldCheck(p, d); reason != "" {
				return Schema{}, unsupported("default of property " + p.name + " " + reason)
			}
		}
	}
	var b bytes.Buffer
	root.write(&b)
	s.canonical = b.Bytes()
	return s, nil
}

func oldPropsOrEmpty(n *oldNode) []oldMember {
	if n == nil {
		return nil
	}
	return n.obj
}

func oldCheckProperty(name string, n *oldNode) (Property, error) {
	if !validPropertyName([]byte(name)) {
		return Property{}, unsupported("property name not allowed")
	}
	if n.kind != kindObject {
		return Property{}, unsupported("property " + name + " is not a schema object")
	}
	p := Property{name: name}
	var typ, enum, header *oldNode
	for _, m := range n.obj {
		switch m.key {
		case "type":
			typ = m.val
		case "enum":
			enum = m.val
		case "x-mcp-header":
			header = m.val
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
	if header != nil {
		// The go-sdk's validateParamHeadersIn, on our tree.
		if typ == nil || p.typ != TypeString && p.typ != TypeInteger && p.typ != TypeBoolean {
			return Property{}, unsupported("x-mcp-header on a property that is not of type string, integer or boolean in property " + name)
		}
		if header.kind != kindString || header.str == "" {
			return Property{}, unsupported("x-mcp-header of property " + name + " is not a non-empty string")
		}
		for _, c := range header.str {
			if !oldIsTChar(c) {
				return Property{}, unsupported("x-mcp-header of property " + name + " is not a valid header name")
			}
		}
		p.header = header.str
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
		p.choices = append(p.choices, scalar{k: kindString, s: v.str})
	}
	return p, nil
}

// check returns "" when v is a valid value of p, else the reason.
func oldCheck(p Property, v *oldNode) string {
	switch p.typ {
	case TypeString:
		if v.kind != kindString {
			return "must be a string"
		}
		if utf8.RuneCountInString(v.str) > limits.MaxArgumentStringLen {
			return "longer than " + strconv.Itoa(limits.MaxArgumentStringLen) + " characters"
		}
		if p.Enum() != nil && !oldContains(p.Enum(), v.str) {
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

func oldContains(list []string, s string) bool {
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
func oldValidate(s Schema, args json.RawMessage) error {
	root, err := oldParse(args)
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
		p, ok := oldProperty(s, m.key)
		if !ok {
			return &ArgumentError{Reason: "unknown argument"}
		}
		if reason := oldCheck(p, m.val); reason != "" {
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

// canonicalAnnotations returns the canonical annotations (nil when absent)
// and the hints parsed from them.
func oldCanonicalAnnotations(raw []byte) ([]byte, hints, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, hints{}, nil
	}
	n, err := oldParse(raw)
	if err != nil {
		return nil, hints{}, err
	}
	if n.kind == kindNull {
		return nil, hints{}, nil
	}
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes(), oldParseHints(n), nil
}

func oldParseHints(n *oldNode) hints {
	if n.kind != kindObject {
		return hints{malformed: true}
	}
	var h hints
	for _, m := range []struct {
		key string
		dst **bool
	}{{"readOnlyHint", &h.readOnly}, {"destructiveHint", &h.destructive}} {
		v := n.get(m.key)
		switch {
		case v == nil:
		case v.kind == kindBool:
			b := v.b
			*m.dst = &b
		default:
			h.malformed = true
		}
	}
	return h
}

// jsonProblem turns a [Canonicalize] error into a short reason.
func oldJSONProblem(err error) string {
	switch {
	case errors.Is(err, ErrDuplicateKey):
		return "duplicate key"
	case errors.Is(err, ErrNumberRange):
		return "number out of range"
	case errors.Is(err, ErrTooDeep):
		return "nested too deeply"
	default:
		return "invalid JSON"
	}
}

func oldHash(d Definition) string {
	h := sha256.New()
	h.Write([]byte(hashTag))
	ann := d.annotations
	if ann == nil {
		ann = emptyAnnotations
	}
	for _, field := range [][]byte{[]byte(d.name), []byte(d.description), d.inputSchema, ann} {
		oldWriteField(h, field)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func oldWriteField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

func oldProperty(s Schema, name string) (Property, bool) {
	i := sort.Search(len(s.props), func(i int) bool { return s.props[i].name >= name })
	if i < len(s.props) && s.props[i].name == name {
		return s.props[i], true
	}
	return Property{}, false
}

// oldIsTChar is the go-sdk's isTChar.
func oldIsTChar(c rune) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// oldNewDefinition is NewDefinition as it was: canonical schema and
// annotations, no verdict or hash kept (checked is false, so Assess and
// NewSnapshot check the canonical schema again, as they did).
func oldNewDefinition(name, description string, inputSchema, annotations json.RawMessage) (Definition, error) {
	if name == "" {
		return Definition{}, &field.Error{Field: "name", Reason: "must not be empty"}
	}
	if !utf8.ValidString(name) {
		return Definition{}, &field.Error{Field: "name", Reason: "must be valid UTF-8"}
	}
	schema, err := oldCanonicalize(inputSchema)
	if err != nil {
		return Definition{}, unsupported(oldJSONProblem(err))
	}
	ann, h, err := oldCanonicalAnnotations(annotations)
	if err != nil {
		return Definition{}, &field.Error{Field: "annotations", Reason: err.Error()}
	}
	return Definition{name: name, description: description, inputSchema: schema, annotations: ann, hints: h}, nil
}

// oldAssess is Assess as it was: the schema checked again from its
// canonical bytes.
func oldAssess(serverName string, d Definition) Assessment {
	a := Assessment{Definition: d, Supported: true, WriteCapable: WriteCapable(d), Hash: oldHash(d)}
	if _, err := ModelToolName(serverName, d.name); err != nil {
		a.Supported, a.Reason = false, reasonOf(err)
		return a
	}
	if _, err := oldCheckSchema(d.inputSchema); err != nil {
		a.Supported, a.Reason = false, reasonOf(err)
	}
	return a
}
