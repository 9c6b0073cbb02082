// Package policy holds a repository's MCP section (mode, servers, calls per
// review) and the rule that merges it with the tenant default into the
// effective policy a review run uses.
package policy

import (
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/limits"
)

// Mode is the mcp.mode of a policy section. The zero Mode is invalid; only
// [ParseMode] and the package variables produce valid ones.
type Mode struct{ s string }

// The modes a section may have.
var (
	// ModeOn turns MCP context on for the listed servers.
	ModeOn = Mode{"on"}
	// ModeOff turns MCP context off whatever the tenant default says.
	ModeOff = Mode{"off"}
	// ModeInherit takes the tenant default.
	ModeInherit = Mode{"inherit"}
)

// ParseMode accepts exactly "on", "off" or "inherit".
func ParseMode(s string) (Mode, error) {
	switch s {
	case ModeOn.s:
		return ModeOn, nil
	case ModeOff.s:
		return ModeOff, nil
	case ModeInherit.s:
		return ModeInherit, nil
	}
	return Mode{}, &field.Error{Field: "mode", Reason: "must be on, off or inherit"}
}

// String returns the wire form ("on", "off", "inherit"; "" for the zero Mode).
func (m Mode) String() string { return m.s }

// IsZero reports whether m is the invalid zero Mode.
func (m Mode) IsZero() bool { return m.s == "" }

// Visibility is a repository's visibility on its code host. The zero
// Visibility is invalid and is treated as public by every rule that asks.
type Visibility struct{ s string }

// The visibilities a repository may have.
var (
	// VisibilityPrivate is a repository only its members can read.
	VisibilityPrivate = Visibility{"private"}
	// VisibilityInternal is a repository every member of the organisation can read.
	VisibilityInternal = Visibility{"internal"}
	// VisibilityPublic is a repository anyone can read; MCP context never runs on it (MC6).
	VisibilityPublic = Visibility{"public"}
)

// ParseVisibility accepts exactly "private", "internal" or "public".
func ParseVisibility(s string) (Visibility, error) {
	switch s {
	case VisibilityPrivate.s:
		return VisibilityPrivate, nil
	case VisibilityInternal.s:
		return VisibilityInternal, nil
	case VisibilityPublic.s:
		return VisibilityPublic, nil
	}
	return Visibility{}, &field.Error{Field: "visibility", Reason: "must be private, internal or public"}
}

// String returns the wire form ("private", "internal", "public"; "" for the zero value).
func (v Visibility) String() string { return v.s }

// IsZero reports whether v is the invalid zero Visibility.
func (v Visibility) IsZero() bool { return v.s == "" }

// The fields this package names in a [field.Error]: "mode", "servers",
// "maxCalls" or "visibility".

// McpSection is the "mcp" section of a repository policy or of the tenant
// default, validated.
type McpSection struct {
	mode     Mode
	servers  []string
	maxCalls int
}

// NewMcpSection validates a section as it arrives from the API. servers are
// server ids (UUIDs, stored lowercase); maxCalls nil means
// [limits.DefaultCallsPerRun]. The servers are not checked against the
// tenant here: that needs the store. Every bad field gives its own
// [*field.Error]; several are combined with [errors.Join].
func NewMcpSection(mode string, servers []string, maxCalls *int) (McpSection, error) {
	var errs []error
	m, err := ParseMode(mode)
	if err != nil {
		errs = append(errs, err)
	}
	ids, err := parseServers(servers)
	if err != nil {
		errs = append(errs, err)
	}
	calls := limits.DefaultCallsPerRun
	if maxCalls != nil {
		calls = *maxCalls
		if calls < limits.MinCallsPerRun || calls > limits.MaxCallsPerRun {
			errs = append(errs, &field.Error{
				Field:  "maxCalls",
				Reason: fmt.Sprintf("must be between %d and %d", limits.MinCallsPerRun, limits.MaxCallsPerRun),
			})
		}
	}
	if len(errs) > 0 {
		return McpSection{}, errors.Join(errs...)
	}
	return McpSection{mode: m, servers: ids, maxCalls: calls}, nil
}

func parseServers(servers []string) ([]string, error) {
	if len(servers) > limits.MaxPolicyServers {
		return nil, &field.Error{Field: "servers", Reason: fmt.Sprintf("must list at most %d servers", limits.MaxPolicyServers)}
	}
	ids := make([]string, 0, len(servers))
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		sid, ok := id.Parse(s)
		if !ok {
			return nil, &field.Error{Field: "servers", Reason: "must contain server ids (UUIDs)"}
		}
		if seen[sid] {
			return nil, &field.Error{Field: "servers", Reason: "must not contain duplicates"}
		}
		seen[sid] = true
		ids = append(ids, sid)
	}
	return ids, nil
}

// UnmarshalMcpSectionFromDatabase rebuilds a stored section without
// re-validating counts or ids, so that a section saved under older limits
// still loads. It is for adapters only; the API must use [NewMcpSection].
// An unknown mode is still an error: a mode is the one thing the merge
// cannot guess.
func UnmarshalMcpSectionFromDatabase(mode string, servers []string, maxCalls int) (McpSection, error) {
	m, err := ParseMode(mode)
	if err != nil {
		return McpSection{}, err
	}
	return McpSection{mode: m, servers: append([]string{}, servers...), maxCalls: maxCalls}, nil
}

// Mode is the section's mode.
func (s McpSection) Mode() Mode { return s.mode }

// Servers returns a copy of the selected server ids, in the given order.
func (s McpSection) Servers() []string { return append([]string{}, s.servers...) }

// MaxCalls is the number of tool calls one review run may make.
func (s McpSection) MaxCalls() int { return s.maxCalls }

// Source says which section an [Effective] policy came from.
type Source struct{ s string }

// The sources of an effective policy.
var (
	// SourceTenant means the tenant default (or its absence) decided.
	SourceTenant = Source{"tenant"}
	// SourceRepository means the repository's own section decided.
	SourceRepository = Source{"repository"}
)

// String returns "tenant" or "repository".
func (s Source) String() string { return s.s }

// Effective is the policy a review run uses after [Merge]. Its mode is
// always [ModeOn] or [ModeOff].
type Effective struct {
	mode     Mode
	servers  []string
	maxCalls int
	source   Source
}

// Mode is [ModeOn] or [ModeOff].
func (e Effective) Mode() Mode { return e.mode }

// Servers returns a copy of the server ids the run may use.
func (e Effective) Servers() []string { return append([]string{}, e.servers...) }

// MaxCalls is the call budget of one run.
func (e Effective) MaxCalls() int { return e.maxCalls }

// Source says whether the tenant default or the repository decided.
func (e Effective) Source() Source { return e.source }

// Merge computes the effective policy. The rule is all-or-nothing, never a
// field-by-field mix, so that what a maintainer sees in one section is
// exactly what runs:
//
//   - repository mode on or off: the repository section as it is (source repository);
//   - repository mode inherit (or a zero section, meaning none stored): the
//     tenant default as it is (source tenant), where a default with mode
//     inherit counts as off because there is nothing above it;
//   - inherit with no tenant default (nil): off, no servers,
//     [limits.DefaultCallsPerRun] calls (source tenant).
func Merge(tenantDefault *McpSection, repo McpSection) Effective {
	if repo.mode == ModeOn || repo.mode == ModeOff {
		return effective(repo, SourceRepository)
	}
	if tenantDefault == nil {
		return Effective{mode: ModeOff, servers: []string{}, maxCalls: limits.DefaultCallsPerRun, source: SourceTenant}
	}
	return effective(*tenantDefault, SourceTenant)
}

func effective(s McpSection, src Source) Effective {
	mode := ModeOff
	if s.mode == ModeOn {
		mode = ModeOn
	}
	servers := append([]string{}, s.servers...)
	return Effective{mode: mode, servers: servers, maxCalls: s.maxCalls, source: src}
}

// Existing keeps only the servers that still exist. A policy stores
// server ids without a foreign key, so a deleted server must not keep a
// repository's MCP context on (the gate wants at least one server).
func (e Effective) Existing(exists map[string]bool) Effective {
	kept := make([]string, 0, len(e.servers))
	for _, id := range e.servers {
		if exists[id] {
			kept = append(kept, id)
		}
	}
	e.servers = kept
	return e
}
