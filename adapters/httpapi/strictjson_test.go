package httpapi

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
)

// strictBody has every shape the API's request bodies use: scalars,
// pointers, a nested struct and a pointer to one, a list of structs and a
// map.
type strictBody struct {
	Name    string             `json:"name"`
	Count   *int               `json:"count"`
	Auth    *serverAuthRequest `json:"auth"`
	Section struct {
		Mode string `json:"mode"`
	} `json:"section"`
	Tools []toolChoiceRequest `json:"tools"`
	Files map[string]string   `json:"files"`
	Tags  []string            `json:"tags"`
}

// TestStrictUnmarshal is the table of hostile bodies: each is refused
// with its code and, for validation_failed, exactly the fields named.
func TestStrictUnmarshal(t *testing.T) {
	tests := []struct {
		name, body string
		code       app.Code // "" accepted
		fields     map[string]string
	}{
		{name: "plain", body: `{"name":"a","count":2,"auth":{"type":"none"},"section":{"mode":"on"},"tools":[{"name":"t"}],"files":{"a.go":"x"},"tags":["x"]}`},
		{name: "empty object", body: `{}`},
		{name: "null scalars and lists stay absent", body: `{"count":null,"tags":null,"name":null}`},
		{name: "escaped text that is not NUL", body: `{"name":"a\u0001\\u0000"}`},

		{name: "not JSON", body: `name=a`, code: app.CodeBadJSON},
		{name: "empty body", body: ``, code: app.CodeBadJSON},
		{name: "truncated", body: `{"name":"a"`, code: app.CodeBadJSON},
		{name: "two values", body: `{} {}`, code: app.CodeBadJSON},
		{name: "trailing garbage", body: `{}x`, code: app.CodeBadJSON},
		{name: "invalid UTF-8", body: "{\"name\":\"\xff\"}", code: app.CodeBadJSON},
		{name: "lone surrogate escape", body: `{"name":"\ud800"}`, code: app.CodeBadJSON},
		{name: "unknown member", body: `{"command":"sh"}`, code: app.CodeBadJSON},
		{name: "unknown nested member", body: `{"auth":{"type":"none","stdio":true}}`, code: app.CodeBadJSON},
		{name: "wrong type", body: `{"count":"2"}`, code: app.CodeBadJSON},
		{name: "array body", body: `[]`, code: app.CodeBadJSON},

		{name: "duplicate key", body: `{"name":"a","name":"b"}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonDuplicate}},
		{name: "duplicate nested key", body: `{"auth":{"type":"none","type":"bearer"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{"auth.type": reasonDuplicate}},
		{name: "duplicate key in a list item", body: `{"tools":[{"name":"a"},{"name":"a","name":"b"}]}`, code: app.CodeValidationFailed,
			fields: map[string]string{"tools[1].name": reasonDuplicate}},
		{name: "duplicate map key", body: `{"files":{"a.go":"x","a.go":"y"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{"files.a.go": reasonDuplicate}},
		{name: "duplicate key spelled with an escape", body: `{"name":"a","n\u0061me":"b"}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonDuplicate}},

		{name: "case-only key", body: `{"Name":"a"}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonCaseOnly}},
		{name: "case-only key beside the right one", body: `{"name":"a","NAME":"b"}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonCaseOnly}},
		{name: "case-only nested key", body: `{"auth":{"Type":"none"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{"auth.type": reasonCaseOnly}},
		{name: "case-only key in a list item", body: `{"tools":[{"name":"a","ConfirmWrite":true}]}`, code: app.CodeValidationFailed,
			fields: map[string]string{"tools[0].confirmWrite": reasonCaseOnly}},
		{name: "case-only camel key", body: `{"auth":{"type":"oauth_client_credentials","tokenurl":"https://x"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{"auth.tokenUrl": reasonCaseOnly}},

		{name: "NUL in a value", body: `{"name":"a\u0000b"}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonNUL}},
		{name: "NUL alone", body: `{"name":"\u0000"}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonNUL}},
		{name: "NUL in a nested value", body: `{"auth":{"type":"bearer","token":"x\u0000"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{"auth.token": reasonNUL}},
		{name: "NUL in a list", body: `{"tags":["ok","\u0000"]}`, code: app.CodeValidationFailed,
			fields: map[string]string{"tags[1]": reasonNUL}},
		{name: "NUL in a map value", body: `{"files":{"a.go":"package a\u0000"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{"files.a.go": reasonNUL}},
		{name: "NUL in a map key", body: `{"files":{"a\u0000.go":"x"}}`, code: app.CodeValidationFailed,
			fields: map[string]string{`files.a\u0000.go`: reasonNUL}},
		{name: "NUL in an unknown key", body: `{"x\u0000":1}`, code: app.CodeValidationFailed,
			fields: map[string]string{`x\u0000`: reasonNUL}},
		{name: "NUL in two fields", body: `{"name":"\u0000","tools":[{"name":"t","description":"\u0000"}]}`, code: app.CodeValidationFailed,
			fields: map[string]string{"name": reasonNUL, "tools[0].description": reasonNUL}},

		{name: "null body", body: `null`, code: app.CodeValidationFailed,
			fields: map[string]string{bodyField: reasonNullObject}},
		{name: "null body with spaces", body: " null\n", code: app.CodeValidationFailed,
			fields: map[string]string{bodyField: reasonNullObject}},
		{name: "null pointer object", body: `{"auth":null}`, code: app.CodeValidationFailed,
			fields: map[string]string{"auth": reasonNullObject}},
		{name: "null struct", body: `{"section":null}`, code: app.CodeValidationFailed,
			fields: map[string]string{"section": reasonNullObject}},
		{name: "null map", body: `{"files":null}`, code: app.CodeValidationFailed,
			fields: map[string]string{"files": reasonNullObject}},
		{name: "null list item object", body: `{"tools":[null]}`, code: app.CodeValidationFailed,
			fields: map[string]string{"tools[0]": reasonNullObject}},
		{name: "null second list item object", body: `{"tools":[{"name":"a"},null]}`, code: app.CodeValidationFailed,
			fields: map[string]string{"tools[1]": reasonNullObject}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v strictBody
			err := strictUnmarshal([]byte(tt.body), &v)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %s", tt.code)
			}
			e := app.AsError(err)
			if e.Code != tt.code {
				t.Fatalf("code %s (%v), want %s", e.Code, err, tt.code)
			}
			if !maps.Equal(e.Fields, tt.fields) {
				t.Fatalf("fields %v, want %v", e.Fields, tt.fields)
			}
		})
	}
}

// TestStrictUnmarshalDecodes checks the values of an accepted body: the
// v2 semantics change nothing a valid body means.
func TestStrictUnmarshalDecodes(t *testing.T) {
	var v strictBody
	body := `{"name":"wiki","count":3,"auth":{"type":"header","name":"x-k","value":"v","scopes":["a"]},"section":{"mode":"on"},"tools":[{"name":"t","description":"d","confirmWrite":true}],"files":{"a.go":"x"},"tags":["é"]}`
	if err := strictUnmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "wiki" || *v.Count != 3 || v.Auth.Type != "header" || v.Auth.Name != "x-k" || v.Auth.Value != "v" ||
		!slices.Equal(v.Auth.Scopes, []string{"a"}) || v.Section.Mode != "on" || len(v.Tools) != 1 ||
		v.Tools[0] != (toolChoiceRequest{Name: "t", Description: "d", ConfirmWrite: true}) || v.Files["a.go"] != "x" || v.Tags[0] != "é" {
		t.Fatalf("decoded %+v", v)
	}
}

// TestFieldPathBoundsNames: a long member name is cut in the answer.
func TestFieldPathBoundsNames(t *testing.T) {
	long := strings.Repeat("a", 300)
	var v strictBody
	err := strictUnmarshal([]byte(`{"files":{"`+long+`":"\u0000"}}`), &v)
	for f := range app.AsError(err).Fields {
		if len(f) > maxFieldToken+16 {
			t.Fatalf("field name of %d bytes", len(f))
		}
	}
}
