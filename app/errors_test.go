package app_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// TestCodeStatus: each code answers the status of openapi.yaml's error
// table, the same for the API and the web pages; an unknown code is 500.
func TestCodeStatus(t *testing.T) {
	tests := []struct {
		code app.Code
		want int
	}{
		{app.CodeBadJSON, 400},
		{app.CodeUnauthenticated, 401},
		{app.CodeForbidden, 403},
		{app.CodeNotFound, 404},
		{app.CodeNameTaken, 409},
		{app.CodeTooManyServers, 409},
		{app.CodeDiscoveryThrottled, 409},
		{app.CodeValidationFailed, 422},
		{app.CodeNotSignedOff, 422},
		{app.CodeInstanceDisabled, 422},
		{app.CodeEndpointNotPublic, 422},
		{app.CodeAcknowledgementRequired, 422},
		{app.CodeCredentialRequired, 422},
		{app.CodeUnknownTool, 422},
		{app.CodeUnsupportedSchema, 422},
		{app.CodeWriteNotConfirmed, 422},
		{app.CodeTooManyTools, 422},
		{app.CodeUnknownServer, 422},
		{app.CodePublicRepository, 422},
		{app.CodeKeysUnavailable, 503},
		{app.CodeServerUnreachable, 502},
		{app.CodeServerUnauthorized, 502},
		{app.CodeProtocolError, 502},
		{app.CodeResponseTooLarge, 502},
		{app.CodeTimeout, 502},
		{app.CodeUnavailable, 503},
		{app.CodeInternal, 500},
		{app.Code("made_up"), 500},
	}
	for _, tt := range tests {
		if got := tt.code.Status(); got != tt.want {
			t.Errorf("Code(%q).Status() = %d, want %d", tt.code, got, tt.want)
		}
	}
}

// TestAsErrorAnswersAnOutageUnavailable: a database outage is 503
// unavailable with a Retry-After, however it is wrapped, also inside an
// error that was already made internal; other causes stay internal.
func TestAsErrorAnswersAnOutageUnavailable(t *testing.T) {
	outage := fmt.Errorf("postgres: enter tenant scope: %w", fmt.Errorf("%w: dial tcp: connection refused", ports.ErrUnavailable))
	for name, err := range map[string]error{
		"as the store returns it": outage,
		"wrapped by a use case":   fmt.Errorf("list servers: %w", outage),
		"made internal before":    &app.Error{Code: app.CodeInternal, Message: "internal error", Cause: outage},
	} {
		e := app.AsError(err)
		if e.Code != app.CodeUnavailable || e.Code.Status() != 503 || e.RetryAfter != app.UnavailableRetry || !errors.Is(e, ports.ErrUnavailable) {
			t.Errorf("%s: AsError = %+v, want unavailable, 503, Retry-After %v, the cause kept", name, e, app.UnavailableRetry)
		}
	}
	if e := app.AsError(errors.New("syntax error at or near")); e.Code != app.CodeInternal {
		t.Errorf("AsError(a query error) = %s, want internal", e.Code)
	}
}
