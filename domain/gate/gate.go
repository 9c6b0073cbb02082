// Package gate decides whether MCP context may exist at all: the
// MCP_CONTEXT_SIGNED_OFF constant, the instance switch QUAVON_MCP_CONTEXT,
// the edition, and the combination of these with a repository's effective
// policy and visibility.
package gate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/codelotse/codelotse/domain/policy"
)

// Edition is QUAVON_EDITION. The zero Edition is invalid; rules that meet
// it treat it as [Enterprise], the stricter one.
type Edition struct{ s string }

// The editions.
var (
	// SelfHosted may list private hosts in QUAVON_MCP_PRIVATE_HOSTS.
	SelfHosted = Edition{"self-hosted"}
	// Enterprise ignores the private-host list.
	Enterprise = Edition{"enterprise"}
)

// ParseEdition accepts exactly "self-hosted" or "enterprise".
func ParseEdition(s string) (Edition, error) {
	switch s {
	case SelfHosted.s:
		return SelfHosted, nil
	case Enterprise.s:
		return Enterprise, nil
	}
	return Edition{}, &InvalidValueError{Name: "edition", Value: s, Allowed: []string{SelfHosted.s, Enterprise.s}}
}

// String returns "self-hosted" or "enterprise" ("" for the zero value).
func (e Edition) String() string { return e.s }

// Instance is QUAVON_MCP_CONTEXT, the operator's switch (MC10). The zero
// Instance is invalid and counts as disabled.
type Instance struct{ s string }

// The instance settings.
var (
	// InstanceAllowed lets tenants use MCP context once it is signed off.
	InstanceAllowed = Instance{"allowed"}
	// InstanceDisabled switches the feature off for the whole instance (the default).
	InstanceDisabled = Instance{"disabled"}
)

// ParseInstance accepts exactly "allowed" or "disabled".
func ParseInstance(s string) (Instance, error) {
	switch s {
	case InstanceAllowed.s:
		return InstanceAllowed, nil
	case InstanceDisabled.s:
		return InstanceDisabled, nil
	}
	return Instance{}, &InvalidValueError{Name: "instance", Value: s, Allowed: []string{InstanceAllowed.s, InstanceDisabled.s}}
}

// String returns "allowed" or "disabled" ("" for the zero value).
func (i Instance) String() string { return i.s }

// Allowed reports whether the instance allows MCP context.
func (i Instance) Allowed() bool { return i == InstanceAllowed }

// InvalidValueError is a configuration value that is not one of the
// allowed spellings. Its message is one line even for a hostile value,
// because the value is quoted.
type InvalidValueError struct {
	// Name is what was parsed ("edition", "instance").
	Name string
	// Value is the rejected input.
	Value string
	// Allowed lists the accepted spellings.
	Allowed []string
}

// Error implements error.
func (e *InvalidValueError) Error() string {
	allowed := make([]string, len(e.Allowed))
	for i, a := range e.Allowed {
		allowed[i] = strconv.Quote(a)
	}
	return fmt.Sprintf("invalid %s %q: must be one of %s", e.Name, e.Value, strings.Join(allowed, ", "))
}

// Errors of [Check], in the order they are checked.
var (
	// ErrNotSignedOff means MCP_CONTEXT_SIGNED_OFF is false (API code not_signed_off).
	ErrNotSignedOff = errors.New("MCP context is not signed off")
	// ErrInstanceDisabled means QUAVON_MCP_CONTEXT is not allowed (API code instance_disabled).
	ErrInstanceDisabled = errors.New("MCP context is disabled on this instance")
)

// Check is the gate for every MCP change and discovery (deleting a server
// excepted). The sign-off is checked first so that an unsigned build always
// answers the same, whatever the operator configured.
func Check(signedOff, instanceAllowed bool) error {
	if !signedOff {
		return ErrNotSignedOff
	}
	if !instanceAllowed {
		return ErrInstanceDisabled
	}
	return nil
}

// EffectiveMcpContext is effectiveMcpContext of the threat analysis: MCP
// context is on only when it is signed off, the instance allows it, the
// effective mode is on with at least one server, and the repository is
// private or internal. An unknown (zero) visibility counts as public.
func EffectiveMcpContext(p policy.Effective, v policy.Visibility, signedOff bool, instanceAllowed bool) bool {
	if Check(signedOff, instanceAllowed) != nil {
		return false
	}
	if p.Mode() != policy.ModeOn || len(p.Servers()) == 0 {
		return false
	}
	return v == policy.VisibilityPrivate || v == policy.VisibilityInternal
}
