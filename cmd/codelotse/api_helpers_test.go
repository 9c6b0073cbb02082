package main

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// Helpers of the black-box API tests, shared by both builds.

// expect fails t unless r has the status and, when code is not "", the
// error code; it also checks the contract's error shape: fields only for
// validation_failed.
func expect(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.Status != status || r.code() != code {
		t.Errorf("%s = %d %q, want %d %q; body %s", what, r.Status, r.code(), status, code, r.Raw)
		return
	}
	if code == "" {
		return
	}
	e, _ := r.Body["error"].(map[string]any)
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("%s: the error has no message: %s", what, r.Raw)
	}
	if _, has := e["fields"]; has != (code == "validation_failed") {
		t.Errorf("%s: fields present = %t for code %s: %s", what, has, code, r.Raw)
	}
}

// fields returns the fields of a validation_failed error.
func fields(r response) map[string]any {
	e, _ := r.Body["error"].(map[string]any)
	f, _ := e["fields"].(map[string]any)
	return f
}

// expectField fails t unless r is 422 validation_failed naming field.
func expectField(t *testing.T, what string, r response, field string) {
	t.Helper()
	expect(t, what, r, 422, "validation_failed")
	if _, ok := fields(r)[field]; !ok {
		t.Errorf("%s: fields %v lack %q: %s", what, fields(r), field, r.Raw)
	}
}

// expectNoEcho fails t if the raw body contains any of the values.
func expectNoEcho(t *testing.T, what string, r response, values ...string) {
	t.Helper()
	for _, v := range values {
		if v != "" && strings.Contains(strings.ToLower(string(r.Raw)), strings.ToLower(v)) {
			t.Errorf("%s: the response echoes %q: %s", what, v, r.Raw)
		}
	}
}

// str reads a string at a path of nested objects ("auth", "hint").
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = obj[p]
	}
	s, _ := cur.(string)
	return s
}

// newKey returns a random 32-byte key in standard base64, as
// QUAVON_ENCRYPTION_KEYS wants it.
func newKey(t *testing.T) (secret []byte, b64 string) {
	t.Helper()
	secret = make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	return secret, base64.StdEncoding.EncodeToString(secret)
}

func randomUUID() string { return uuid.NewString() }

// serverBody is a valid create request for a public IP-literal URL (no DNS).
func serverBody(name string) map[string]any {
	return map[string]any{"name": name, "url": "https://93.184.216.34/mcp",
		"auth": map[string]any{"type": "none"}, "acknowledged": true}
}
