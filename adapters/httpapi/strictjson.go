package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/app"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Field reasons of the strict decoder (docs/input.md): each is a
// validation_failed naming the field, never bad_json.
const (
	reasonNUL        = "must not contain a NUL byte"
	reasonDuplicate  = "is given more than once"
	reasonCaseOnly   = "is spelled with a different case; names are case-sensitive"
	reasonNullObject = "must be an object, not null"
	reasonUTF8       = "must be valid UTF-8"
	// bodyField names the body itself (a null body).
	bodyField = "body"
)

// strictUnmarshal decodes body, one JSON value, into v with the semantics
// of encoding/json/v2 (github.com/go-json-experiment/json), the strict
// decoder of every API body:
//
//   - invalid JSON, invalid UTF-8, a wrong type, an unknown member or a
//     second value: bad_json;
//   - a duplicate member name (jsontext rejects it, the default of v2), a
//     NUL byte in any string, a member name or its value: validation_failed
//     naming the member;
//   - a member whose name matches one of the schema's only when case is
//     ignored (v2 matches names case-sensitively, v1 did not):
//     validation_failed naming the schema's field;
//   - null where the schema has an object (the body itself, a struct or a
//     map): validation_failed naming it ("body" for the body).
func strictUnmarshal(body []byte, v any) error {
	if err := scanJSON(body); err != nil {
		return err
	}
	err := json.Unmarshal(body, v, json.RejectUnknownMembers(true), json.WithUnmarshalers(refuseNullObjects))
	if err == nil {
		return nil
	}
	var nerr *nullObjectError
	if errors.As(err, &nerr) {
		return app.Invalid(map[string]string{nerr.field: reasonNullObject})
	}
	var serr *json.SemanticError
	if errors.As(err, &serr) && errors.Is(serr.Err, json.ErrUnknownName) {
		if name, ok := caseOnlyMatch(reflect.TypeOf(v), serr.JSONPointer); ok {
			return app.Invalid(map[string]string{name: reasonCaseOnly})
		}
	}
	return app.Fail(app.CodeBadJSON, "the body is not valid JSON for this request")
}

// scanJSON reads body token by token: it finds a syntax error, invalid
// UTF-8, a second value (bad_json), a duplicate member name and NUL bytes
// (validation_failed, every field that has one).
func scanJSON(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	nul := map[string]string{}
	values := 0
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var serr *jsontext.SyntacticError
			if errors.As(err, &serr) && errors.Is(serr.Err, jsontext.ErrDuplicateName) {
				return app.Invalid(map[string]string{fieldPath(serr.JSONPointer): reasonDuplicate})
			}
			return app.Fail(app.CodeBadJSON, "the body is not valid JSON")
		}
		if dec.StackDepth() == 0 {
			if values++; values > 1 {
				return app.Fail(app.CodeBadJSON, "the body holds more than one JSON value")
			}
		}
		if tok.Kind() == '"' && strings.ContainsRune(tok.String(), 0) {
			nul[fieldPath(dec.StackPointer())] = reasonNUL
		}
	}
	if values == 0 {
		return app.Fail(app.CodeBadJSON, "the body is empty")
	}
	if len(nul) > 0 {
		return app.Invalid(nul)
	}
	return nil
}

// nullObjectError is a null where the schema has an object.
type nullObjectError struct{ field string }

func (e *nullObjectError) Error() string { return e.field + ": " + reasonNullObject }

// refuseNullObjects runs before the default unmarshaling of every value:
// a null for a struct, a pointer to one or a map is an error; anything
// else goes on as usual.
var refuseNullObjects = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v any) error {
	if dec.PeekKind() != 'n' || !isObject(reflect.TypeOf(v).Elem()) {
		return json.SkipFunc
	}
	return &nullObjectError{field: fieldPath(nextPointer(dec))}
})

// nextPointer is the pointer of the value dec reads next: in an object the
// member's name was read last (StackPointer ends with it); in an array
// StackPointer names the element read last, so the next one's index is
// the array's length so far.
func nextPointer(dec *jsontext.Decoder) jsontext.Pointer {
	ptr := dec.StackPointer()
	kind, n := dec.StackIndex(dec.StackDepth())
	if kind != '[' {
		return ptr
	}
	if n > 0 {
		ptr = ptr.Parent()
	}
	return ptr.AppendToken(strconv.FormatInt(n, 10))
}

func isObject(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// caseOnlyMatch answers the schema's spelling of the unknown member at ptr
// when one of its siblings in v's type differs from it only in case.
func caseOnlyMatch(t reflect.Type, ptr jsontext.Pointer) (string, bool) {
	parent, last := ptr.Parent(), ptr.LastToken()
	for tok := range parent.Tokens() {
		t = deref(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := jsonField(t, func(name string) bool { return name == tok })
			if !ok {
				return "", false
			}
			t = f.Type
		case reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		default:
			return "", false
		}
	}
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return "", false
	}
	f, ok := jsonField(t, func(name string) bool { return strings.EqualFold(name, last) })
	if !ok {
		return "", false
	}
	return fieldPath(parent.AppendToken(jsonName(f))), true
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField finds the exported field of struct t (embedded structs
// flattened, as the decoder does) whose JSON name satisfies match.
func jsonField(t reflect.Type, match func(string) bool) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && deref(f.Type).Kind() == reflect.Struct {
			if inner, ok := jsonField(deref(f.Type), match); ok {
				return inner, true
			}
			continue
		}
		if match(jsonName(f)) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	return f.Name
}

// maxFieldToken bounds one name of a field path in an answer: a member
// name is the caller's text (a file path of a review, say).
const maxFieldToken = 64

// fieldPath turns a JSON pointer into the API's field names, the same
// spelling as the validator's: "/auth/token" is "auth.token",
// "/tools/0/name" is "tools[0].name". A NUL byte or invalid UTF-8 in a
// name is shown escaped, and a long name is cut.
func fieldPath(ptr jsontext.Pointer) string {
	var sb strings.Builder
	for tok := range ptr.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 32); err == nil && sb.Len() > 0 {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		tok = strings.ReplaceAll(strings.ToValidUTF8(tok, "\uFFFD"), "\x00", `\u0000`)
		if utf8.RuneCountInString(tok) > maxFieldToken {
			tok = string([]rune(tok)[:maxFieldToken]) + "…"
		}
		sb.WriteString(tok)
	}
	if sb.Len() == 0 {
		return bodyField
	}
	return sb.String()
}

// checkQuery refuses a query parameter whose name or value holds a NUL
// byte or invalid UTF-8 (PostgreSQL stores neither in text):
// validation_failed naming every such parameter, before any handler
// reads it.
func checkQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	fields := map[string]string{}
	for name, values := range r.URL.Query() {
		all := append([]string{name}, values...)
		field := fieldPath(jsontext.Pointer("").AppendToken(name))
		switch {
		case slices.ContainsFunc(all, func(s string) bool { return strings.ContainsRune(s, 0) }):
			fields[field] = reasonNUL
		case slices.ContainsFunc(all, func(s string) bool { return !utf8.ValidString(s) }):
			fields[field] = reasonUTF8
		}
	}
	if len(fields) > 0 {
		return app.Invalid(fields)
	}
	return nil
}
