package server

import "time"

// Status is a server's state at a glance, as the API's ServerView.status
// and the server list show it.
type Status string

// The statuses, in the order [Server.StatusUnder] and [Server.Status]
// decide them.
const (
	// StatusOutsideAllowlist: the operator's allowlist of MCP server URLs
	// (QUAVON_MCP_ALLOWED_URLS) does not allow the server's URL, so
	// nothing uses it; decided by [Server.StatusUnder] only.
	StatusOutsideAllowlist Status = "outside_allowlist"
	// StatusDisabled: the admin switched the server off for reviews.
	StatusDisabled Status = "disabled"
	// StatusNeedsConnection: an OAuth authorization-code server that is
	// not (or no longer) connected.
	StatusNeedsConnection Status = "needs_connection"
	// StatusToolsChanged: at least one allowlisted tool changed and is
	// blocked until it is approved again or removed.
	StatusToolsChanged Status = "tools_changed"
	// StatusUnauthorized: the server refused the credential last time.
	StatusUnauthorized Status = "unauthorized"
	// StatusUnreachable: the last discovery or review could not list the
	// server's tools (unreachable, timeout, protocol error, too large).
	StatusUnreachable Status = "unreachable"
	// StatusNeverDiscovered: no discovery ran and no tool is allowlisted.
	StatusNeverDiscovered Status = "never_discovered"
	// StatusOK: reachable at the last listing, no tool changed.
	StatusOK Status = "ok"
)

// Statuses are every status, in the order [Server.StatusUnder] decides
// them.
var Statuses = []Status{StatusOutsideAllowlist, StatusDisabled, StatusNeedsConnection, StatusToolsChanged, StatusUnauthorized,
	StatusUnreachable, StatusNeverDiscovered, StatusOK}

// The lastError codes the status reads (spelt as the application records
// them: app.RemoteFailure's server_unauthorized, the review's
// tool_changed).
const (
	lastErrorUnauthorized = "server_unauthorized"
	lastErrorToolChanged  = "tool_changed"
)

// Status decides the server's status at time now: disabled, then an
// unconnected OAuth code flow, then changed tools (they block calls
// whatever else holds), then the last error, then whether it was ever
// discovered.
func (s *Server) Status(now time.Time) Status {
	switch {
	case !s.enabled:
		return StatusDisabled
	case s.credKind == KindOAuthAuthorizationCode && !s.oauth.Connected(now):
		return StatusNeedsConnection
	case len(s.ChangedTools()) > 0 || s.lastError == lastErrorToolChanged:
		return StatusToolsChanged
	case s.lastError == lastErrorUnauthorized:
		return StatusUnauthorized
	case s.lastError != "":
		return StatusUnreachable
	case s.lastDiscoveryAt.IsZero() && len(s.tools) == 0 && s.listed == nil:
		return StatusNeverDiscovered
	}
	return StatusOK
}
