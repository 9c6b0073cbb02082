package tool

import "strings"

// reasonPrefixUnsupported starts every [UnsupportedError] reason; the API
// reports it as the discovery reason (openapi.yaml: "unsupported schema").
const reasonPrefixUnsupported = "unsupported schema"

// UnsupportedError says why an input schema is outside the supported flat
// form (MC4). Reason is short, human-readable, starts with
// "unsupported schema" and names at most a property or keyword that passed
// the name rules, so it can be shown to the admin as it is.
type UnsupportedError struct {
	Reason string
}

func (e *UnsupportedError) Error() string { return e.Reason }

func unsupported(detail string) *UnsupportedError {
	if detail == "" {
		return &UnsupportedError{Reason: reasonPrefixUnsupported}
	}
	return &UnsupportedError{Reason: reasonPrefixUnsupported + ": " + detail}
}

// ArgumentError says why tool-call arguments were refused (condition 8 of
// the threat analysis). Field is the schema's property name, or empty when
// the arguments as a whole are wrong or the key is unknown. Neither field
// ever holds an argument value or an unknown key: both come from the model
// and may carry data that must not reach logs.
type ArgumentError struct {
	Field  string
	Reason string
}

func (e *ArgumentError) Error() string {
	if e.Field == "" {
		return "invalid arguments: " + e.Reason
	}
	return "invalid argument " + e.Field + ": " + e.Reason
}

// NameError says why a model-facing tool name cannot be built. Reason
// starts with "unsupported name" or "name too long", the discovery reasons
// of the API. Server and Tool are the inputs as given.
type NameError struct {
	Server string
	Tool   string
	Reason string
}

func (e *NameError) Error() string { return e.Reason }

// safeWord returns s if it is a short identifier-like word that may appear
// in an error reason, or "" if it could be hostile text (newlines, markup,
// very long strings) from a server.
func safeWord(s string) string {
	const maxWord = 64
	if s == "" || len(s) > maxWord {
		return ""
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r == '$' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) >= 0 {
		return ""
	}
	return s
}
