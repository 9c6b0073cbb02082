// Package field holds the domain's one validation error: which field of an
// input a constructor refused, and why. Every domain package (server,
// policy, settings, tool) returns it, so the application turns any of them
// into one validation_failed answer the same way.
package field

// Error is a validation failure of one field. Reason is short and safe to
// show to users: it never repeats the rejected value, because that may be a
// URL with a secret in it, a credential, or text from an MCP server.
type Error struct {
	// Field is the API name of the field, such as "url", "auth.token",
	// "mode" or "retentionDays".
	Field string
	// Reason is a short explanation such as "must be https".
	Reason string
}

// Error implements error: "field: reason".
func (e *Error) Error() string { return e.Field + ": " + e.Reason }
