package app

// What the modules share besides the codes, the gates and the sealed
// secrets (credentials.go): the permissions and the refusals more than
// one module answers.

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// Permissions of API tokens (openapi.yaml: the bearer token).
const (
	// PermTenantManage covers /v1/mcp and creating repositories.
	PermTenantManage = "tenant:manage"
	// PermRepoManage covers repository policies and reviews.
	PermRepoManage = "repo:manage"
)

// KeysUnavailable is keys_unavailable: no key ring to seal or open with.
func KeysUnavailable(cause error) error {
	return &Error{Code: CodeKeysUnavailable,
		Message: "credentials cannot be stored: no encryption key is configured (QUAVON_ENCRYPTION_KEYS)", Cause: cause}
}

// CheckDisplayName returns why name is not 1–max printable characters, or "".
func CheckDisplayName(name string, max int) string {
	switch {
	case !utf8.ValidString(name):
		return "must be valid UTF-8"
	case strings.TrimSpace(name) == "":
		return "is required"
	case utf8.RuneCountInString(name) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return "must contain printable characters only"
		}
	}
	return ""
}

// NotFound maps the store's ErrNotFound to the contract's not_found and
// keeps any other error as it is (internal).
func NotFound(err error, what string) error {
	if errors.Is(err, ports.ErrNotFound) {
		return &Error{Code: CodeNotFound, Message: what + " not found", Cause: err}
	}
	return err
}

// Flatten unpacks an errors.Join.
func Flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// InheritSection is a repository's section when none is stored.
func InheritSection() policy.McpSection {
	s, err := policy.NewMcpSection(policy.ModeInherit.String(), []string{}, nil)
	if err != nil {
		panic(err) // constant input
	}
	return s
}

// remoteCodes maps the transport's fixed failures to the codes the
// API answers (openapi.yaml: 502 server_unreachable, server_unauthorized,
// protocol_error, response_too_large, timeout). A refused redirect or a
// blocked address is, to the admin, a server that cannot be reached;
// lastError keeps the precise code. A 401 or 403 of the server is
// server_unauthorized: a credential to fix, not a protocol error.
var remoteCodes = []struct {
	err  error
	code Code
}{
	{ports.ErrServerUnauthorized, CodeServerUnauthorized},
	{ports.ErrTimeout, CodeTimeout},
	{ports.ErrResponseTooLarge, CodeResponseTooLarge},
	{ports.ErrProtocol, CodeProtocolError},
	{ports.ErrRedirectRefused, CodeServerUnreachable},
	{ports.ErrAddressBlocked, CodeServerUnreachable},
	{ports.ErrServerUnreachable, CodeServerUnreachable},
}

// RemoteFailure is the API's code of a transport failure and the precise
// code recorded as the server's lastError (any unknown failure is
// server_unreachable).
func RemoteFailure(err error) (code Code, lastError string) {
	for _, c := range remoteCodes {
		if errors.Is(err, c.err) {
			return c.code, c.err.Error()
		}
	}
	return CodeServerUnreachable, ports.ErrServerUnreachable.Error()
}
