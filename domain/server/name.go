package server

import (
	"fmt"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

// Name is a server's name, unique in its tenant and part of the
// model-facing tool names mcp_<server>_<tool>.
type Name struct{ s string }

// ParseName accepts ^[a-z][a-z0-9_]{0,23}$.
func ParseName(s string) (Name, error) {
	ok := len(s) >= 1 && len(s) <= limits.MaxServerNameLen && s[0] >= 'a' && s[0] <= 'z'
	for i := 1; ok && i < len(s); i++ {
		c := s[i]
		ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
	}
	if !ok {
		return Name{}, &field.Error{Field: "name", Reason: fmt.Sprintf(
			"must start with a lowercase letter and contain only a-z, 0-9 and _, at most %d characters", limits.MaxServerNameLen)}
	}
	return Name{s}, nil
}

// String returns the name.
func (n Name) String() string { return n.s }

// IsZero reports whether n is the invalid zero Name.
func (n Name) IsZero() bool { return n.s == "" }
