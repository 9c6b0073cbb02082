package web

import (
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
)

// TestRefusalsInWords: every code of the contract has words of its own,
// without a code, a pattern or JSON; field reasons become sentences.
func TestRefusalsInWords(t *testing.T) {
	for _, code := range []app.Code{app.CodeBadJSON, app.CodeUnauthenticated, app.CodeForbidden, app.CodeNotFound, app.CodeNameTaken,
		app.CodeTooManyServers, app.CodeDiscoveryThrottled, app.CodeValidationFailed, app.CodeNotSignedOff, app.CodeInstanceDisabled,
		app.CodeEndpointNotPublic, app.CodeAcknowledgementRequired, app.CodeCredentialRequired, app.CodeUnknownTool,
		app.CodeUnsupportedSchema, app.CodeWriteNotConfirmed, app.CodeTooManyTools, app.CodeUnknownServer, app.CodePublicRepository,
		app.CodeKeysUnavailable, app.CodeServerUnreachable, app.CodeServerUnauthorized, app.CodeProtocolError,
		app.CodeResponseTooLarge, app.CodeTimeout, app.CodeUnavailable, app.CodeInternal} {
		w, ok := codeWords[code]
		if !ok || strings.ContainsAny(w, "^${}\"_") || strings.Contains(w, string(code)) {
			t.Errorf("codeWords[%s] = %q", code, w)
		}
	}
	tests := []struct{ field, reason, want string }{
		{"auth.name", "must match ^x-[a-z0-9-]{1,62}$", "The header name must start with x- and use only lowercase letters, digits and dashes (at most 64 characters)."},
		{"url", "is required", "Fill in the URL."},
		{"url", "must use https", "URL must use https."},
		{"auth.issuer", "is required with a client secret", "Fill in the issuer: it is required with a client secret."},
		{"auth.clientId", "is required: the authorization server offers no dynamic client registration", "Fill in the client id: the authorization server offers no dynamic client registration."},
		{"auth.scopes", `must not contain "quotes"`, "Scopes is not in a form this field accepts."},
		{"mcp.maxCalls", "must be between 1 and 20", "Calls per review must be between 1 and 20."},
		{"maxCallsPerMinute", "must be at most 50, the instance's limit (QUAVON_MCP_MAX_CALLS_PER_MINUTE), or null",
			"Calls per minute is above this instance's limit: choose a lower number, or ask an operator to raise it (the setting QUAVON_MCP_MAX_CALLS_PER_MINUTE)."},
		{"maxCallsPerMinute", "must be 1 to 600, or null for no limit", "Calls per minute must be a whole number from 1 to 600, or empty for no limit."},
	}
	for _, tt := range tests {
		if got := sayField(tt.field, tt.reason); got != tt.want {
			t.Errorf("sayField(%q, %q) = %q, want %q", tt.field, tt.reason, got, tt.want)
		}
	}
	f := &formError{Code: string(app.CodeAcknowledgementRequired), Message: `the acknowledgement is required ("acknowledged": true)`,
		Fields: map[string]string{"acknowledged": `the acknowledgement is required ("acknowledged": true)`}}
	if got := f.Said("acknowledged"); got == nil || got.Text != codeWords[app.CodeAcknowledgementRequired] || got.ID != "err-acknowledged" {
		t.Errorf("a refusal placed next to its field says %+v", got)
	}
}

// TestRemovedWords: a call row says how many invisible characters its
// result lost, and nothing when none.
func TestRemovedWords(t *testing.T) {
	for n, want := range map[int]string{0: "", 1: "; 1 invisible character removed", 41: "; 41 invisible characters removed"} {
		if got := removedWords(n); got != want {
			t.Errorf("removedWords(%d) = %q, want %q", n, got, want)
		}
	}
}
