package poison

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/tool"
)

// The codes of a finding, in the order Scan returns them.
const (
	HiddenCharacters = "hidden_characters"
	Instruction      = "instruction"
	OtherTool        = "other_tool"
	EncodedPayload   = "encoded_payload"
	SecretRequest    = "secret_request"
	URL              = "url"
	Padding          = "padding"
)

// Codes are every code, in the order Scan returns them.
var Codes = []string{HiddenCharacters, Instruction, OtherTool, EncodedPayload, SecretRequest, URL, Padding}

// Bounds of one scan.
const (
	// MaxTextBytes is how much text of one definition is read, all fields
	// together; a definition with more is a Padding finding.
	MaxTextBytes = 64 << 10
	// MaxFields is how many fields of one definition are read.
	MaxFields = 1000
	// MaxSchemaDepth is how deep the input schema is walked.
	MaxSchemaDepth = 32
	// MaxDecodeDepth is how many encodings are nested (base64 of base64).
	MaxDecodeDepth = 2
	// MaxDecodes is how many encoded runs one scan decodes.
	MaxDecodes = 32
	// MaxExcerptRunes caps a finding's excerpt, in characters.
	MaxExcerptRunes = 120
)

// Finding is one reason to look at a tool definition again: its code and
// an excerpt of at most MaxExcerptRunes characters where invisible
// characters are written as U+XXXX.
type Finding struct {
	Code    string
	Excerpt string
}

// Context is what Scan knows of the server the definition comes from.
type Context struct {
	// ServerHost is the host of the server's URL: links to its site are
	// not URL findings.
	ServerHost string
	// ServerName is the server's name in the tenant: model-facing names
	// mcp_<ServerName>_… (and mcp__<ServerName>__…) are its own.
	ServerName string
	// OwnTools are the names of the server's other tools: naming them is
	// ordinary.
	OwnTools []string
	// OtherTools are the tool names (server-side and model-facing) of the
	// tenant's other servers: naming one is OtherTool.
	OtherTools []string
	// Redact, when set, is applied to the text of every excerpt.
	Redact func(string) string
}

// Field is one text of a definition and where it is.
type Field struct{ Where, Text string }

// Scan returns the findings for one tool definition: at most one per
// code, the first field's, in the order of Codes. It reads the name, the
// description, every string of the annotations and, in the input schema,
// every property's name, title, description and enum, const, default and
// examples strings, nested ones too.
func Scan(d tool.Definition, c Context) []Finding {
	fields := []Field{{"name", d.Name()}, {"description", d.Description()}}
	var w walker
	if raw := d.Annotations(); len(raw) > 0 {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			w.strings("annotations", v, 0)
		}
	}
	var schema any
	if json.Unmarshal(d.InputSchema(), &schema) == nil {
		w.schema("inputSchema", schema, 0)
	}
	c.OwnTools = append(append([]string(nil), c.OwnTools...), d.Name())
	return ScanTexts(append(fields, w.fields...), c)
}

// walker collects the fields of annotations and a schema, at most
// MaxFields of them and MaxSchemaDepth deep.
type walker struct{ fields []Field }

func (w *walker) add(where, text string) {
	if len(w.fields) < MaxFields && text != "" {
		w.fields = append(w.fields, Field{where, text})
	}
}

// strings adds every string in v (annotations).
func (w *walker) strings(where string, v any, depth int) {
	if depth > MaxSchemaDepth || len(w.fields) >= MaxFields {
		return
	}
	switch v := v.(type) {
	case string:
		w.add(where, v)
	case []any:
		for i, e := range v {
			w.strings(where+"["+strconv.Itoa(i)+"]", e, depth+1)
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			w.strings(where+"."+k, v[k], depth+1)
		}
	}
}

// schemaText are the keywords whose strings a schema shows the model.
var schemaText = map[string]bool{"title": true, "description": true, "enum": true, "const": true, "default": true, "examples": true, "$comment": true}

// schemaMaps are the keywords that hold schemas by name.
var schemaMaps = map[string]bool{"properties": true, "$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true}

// schema adds the texts of a schema and of every schema inside it.
func (w *walker) schema(where string, v any, depth int) {
	if depth > MaxSchemaDepth || len(w.fields) >= MaxFields {
		return
	}
	switch v := v.(type) {
	case []any: // items as a list, anyOf, oneOf, allOf, prefixItems
		for i, e := range v {
			w.schema(where+"["+strconv.Itoa(i)+"]", e, depth+1)
		}
		return
	case map[string]any:
		for _, k := range sortedKeys(v) {
			w.keyword(where, k, v[k], depth)
		}
	}
}

// keyword adds the texts of one keyword of a schema.
func (w *walker) keyword(where, k string, v any, depth int) {
	switch {
	case schemaText[k]:
		w.strings(where+"."+k, v, depth+1)
	case schemaMaps[k]:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, name := range sortedKeys(m) {
			w.add(where+"."+k+"."+name, name) // the property name itself
			w.schema(where+"."+k+"."+name, m[name], depth+1)
		}
	case k == "required":
		w.strings(where+"."+k, v, depth+1)
	default:
		if _, ok := v.(map[string]any); ok || isList(v) {
			w.schema(where+"."+k, v, depth+1) // items, anyOf, not, if, …
		}
	}
}

func isList(v any) bool { _, ok := v.([]any); return ok }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ScanTexts is Scan over raw fields: for a definition that could not be
// parsed, or for tests.
func ScanTexts(fields []Field, c Context) []Finding {
	return scanTexts(fields, c).findings()
}

// scanTexts reads the fields and decodes their encoded runs.
func scanTexts(fields []Field, c Context) *scan {
	s := newScan(c)
	budget := MaxTextBytes
	for _, f := range fields {
		if len(s.fields) >= MaxFields {
			break
		}
		text := f.Text
		if len(text) > budget {
			s.cut = f.Where
			text = text[:budget] // cut before the copy of ToValidUTF8
		}
		if text = strings.ToValidUTF8(text, "\uFFFD"); len(text) > budget {
			text = cutUTF8(text, budget)
		}
		budget -= len(text)
		s.read += len(text)
		s.fields = append(s.fields, newView(f.Where, text, 0))
		if budget == 0 {
			break
		}
	}
	s.decodeAll()
	return s
}

// cutUTF8 is s cut to at most n bytes at a character boundary.
func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
