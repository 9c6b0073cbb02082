// Package app is the shared root of the application modules
// (app/registry, app/repositories, app/reviews, app/accounts,
// app/operations): the contract's error codes, the gates, the status
// query, the permissions and the few helpers more than one module needs.
// It imports no module; every module may import it (cmd/archlint).
package app

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// Code is a fixed error code of the API (openapi.yaml: the Error schema).
type Code string

// The contract's error codes.
const (
	CodeBadJSON                 Code = "bad_json"
	CodeUnauthenticated         Code = "unauthenticated"
	CodeForbidden               Code = "forbidden"
	CodeNotFound                Code = "not_found"
	CodeNameTaken               Code = "name_taken"
	CodeTooManyServers          Code = "too_many_servers"
	CodeDiscoveryThrottled      Code = "discovery_throttled"
	CodeRateLimited             Code = "rate_limited"
	CodeValidationFailed        Code = "validation_failed"
	CodeNotSignedOff            Code = "not_signed_off"
	CodeInstanceDisabled        Code = "instance_disabled"
	CodeEndpointNotPublic       Code = "endpoint_not_public"
	CodeAcknowledgementRequired Code = "acknowledgement_required"
	CodeCredentialRequired      Code = "credential_required"
	CodeUnknownTool             Code = "unknown_tool"
	CodeUnsupportedSchema       Code = "unsupported_schema"
	CodeWriteNotConfirmed       Code = "write_not_confirmed"
	CodeTooManyTools            Code = "too_many_tools"
	CodeUnknownServer           Code = "unknown_server"
	CodePublicRepository        Code = "public_repository"
	CodeKeysUnavailable         Code = "keys_unavailable"
	CodeServerUnreachable       Code = "server_unreachable"
	CodeServerUnauthorized      Code = "server_unauthorized"
	CodeProtocolError           Code = "protocol_error"
	CodeResponseTooLarge        Code = "response_too_large"
	CodeTimeout                 Code = "timeout"
	CodeUnavailable             Code = "unavailable"
	CodeInternal                Code = "internal"
)

// Error is an error a user may see: a fixed code, a message written by us
// (never a URL, header, credential, SQL or stack), field reasons for
// validation_failed, and the internal cause for the log only.
type Error struct {
	Code    Code
	Message string
	Fields  map[string]string
	// RetryAfter, when set, becomes the Retry-After header (whole seconds,
	// rounded up).
	RetryAfter time.Duration
	Cause      error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Fail returns an *Error with a code and a message.
func Fail(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// Invalid returns a validation_failed error with field reasons.
func Invalid(fields map[string]string) *Error {
	return &Error{Code: CodeValidationFailed, Message: "the request has invalid fields", Fields: fields}
}

// UnavailableRetry is the Retry-After of an unavailable answer.
const UnavailableRetry = 5 * time.Second

// AsError finds the *Error in err's chain; a database outage
// ([ports.ErrUnavailable]) is unavailable, whatever wraps it; an unknown
// error is internal, its cause kept for the log.
func AsError(err error) *Error {
	if errors.Is(err, ports.ErrUnavailable) {
		return &Error{Code: CodeUnavailable, Message: "the database is unavailable; try again shortly", RetryAfter: UnavailableRetry, Cause: err}
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error", Cause: err}
}

// statuses are the HTTP statuses the API answers with each code (the
// table of openapi.yaml's error responses); the web pages answer the same.
var statuses = map[Code]int{
	CodeBadJSON:                 http.StatusBadRequest,
	CodeUnauthenticated:         http.StatusUnauthorized,
	CodeForbidden:               http.StatusForbidden,
	CodeNotFound:                http.StatusNotFound,
	CodeNameTaken:               http.StatusConflict,
	CodeTooManyServers:          http.StatusConflict,
	CodeDiscoveryThrottled:      http.StatusConflict,
	CodeRateLimited:             http.StatusTooManyRequests,
	CodeValidationFailed:        http.StatusUnprocessableEntity,
	CodeNotSignedOff:            http.StatusUnprocessableEntity,
	CodeInstanceDisabled:        http.StatusUnprocessableEntity,
	CodeEndpointNotPublic:       http.StatusUnprocessableEntity,
	CodeAcknowledgementRequired: http.StatusUnprocessableEntity,
	CodeCredentialRequired:      http.StatusUnprocessableEntity,
	CodeUnknownTool:             http.StatusUnprocessableEntity,
	CodeUnsupportedSchema:       http.StatusUnprocessableEntity,
	CodeWriteNotConfirmed:       http.StatusUnprocessableEntity,
	CodeTooManyTools:            http.StatusUnprocessableEntity,
	CodeUnknownServer:           http.StatusUnprocessableEntity,
	CodePublicRepository:        http.StatusUnprocessableEntity,
	CodeKeysUnavailable:         http.StatusServiceUnavailable,
	CodeServerUnreachable:       http.StatusBadGateway,
	CodeServerUnauthorized:      http.StatusBadGateway,
	CodeProtocolError:           http.StatusBadGateway,
	CodeResponseTooLarge:        http.StatusBadGateway,
	CodeTimeout:                 http.StatusBadGateway,
	CodeUnavailable:             http.StatusServiceUnavailable,
	CodeInternal:                http.StatusInternalServerError,
}

// Status is the HTTP status of a refusal with this code; an unknown code
// is an internal error (500).
func (c Code) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}
