// Package limits holds every number of the threat analysis (MC1–MC12 of
// docs/threat-model.md) as a named constant. Other packages refer to these
// names; a number that appears in the threat analysis must not be written
// anywhere else as a literal.
package limits

import "time"

// Registration (MC1, MC2, MC8).
const (
	// MaxServerNameLen is the longest server name (^[a-z][a-z0-9_]{0,23}$).
	MaxServerNameLen = 24
	// MaxURLLen is the longest server URL in characters.
	MaxURLLen = 2048
	// MaxCredentialLen is the longest bearer token or header value.
	MaxCredentialLen = 4096
	// CredentialHintChars is how many trailing characters of a credential the hint shows.
	CredentialHintChars = 4
	// MaxServersPerTenant is the number of MCP servers a tenant may register.
	MaxServersPerTenant = 20
)

// Tools and schemas (MC4, MC7, MC8).
const (
	// MaxToolsPerServer is the size of a server's allowlist.
	MaxToolsPerServer = 20
	// MaxListedTools is the most tools a discovery accepts from one server.
	MaxListedTools = 200
	// MaxSchemaProperties is the most properties a supported input schema has.
	MaxSchemaProperties = 20
	// MaxEnumValues is the most values of a supported string enum.
	MaxEnumValues = 50
	// MaxArgumentStringLen caps every string argument, in characters.
	MaxArgumentStringLen = 500
	// MaxToolDescriptionLen caps the admin description shown to the model, in characters.
	MaxToolDescriptionLen = 500
	// MaxModelToolNameLen is the longest model-facing tool name.
	MaxModelToolNameLen = 64
)

// Repository policy (MC8).
const (
	// MaxPolicyServers is the most servers a repository policy selects.
	MaxPolicyServers = 5
	// MinCallsPerRun and MaxCallsPerRun bound maxCalls.
	MinCallsPerRun = 1
	MaxCallsPerRun = 20
	// DefaultCallsPerRun is maxCalls when a policy does not say.
	DefaultCallsPerRun = 5
)

// Sizes and time (MC8).
const (
	// DiscoveryResponseCap is the byte cap per HTTP response during discovery.
	DiscoveryResponseCap = 1 << 20
	// ReviewResponseCap is the byte cap per HTTP response during a review.
	ReviewResponseCap = 256 << 10
	// ToolResultCap is the largest tool result accepted, in bytes.
	ToolResultCap = 64 << 10
	// RunByteBudget is the total tool-result bytes one review run accepts.
	RunByteBudget = 256 << 10
	// CallReservation is what each call reserves from the run budget before it is sent.
	CallReservation = ToolResultCap
	// ResultPromptChars caps a result in the prompt, in characters.
	ResultPromptChars = 8000
	// CallTimeout is MCP_CALL_TIMEOUT_MS: each HTTP request to an MCP server.
	CallTimeout = 10 * time.Second
	// DiscoveryInterval is the least time between two discoveries of one
	// server (a connection test of a registered server takes the same
	// claim).
	DiscoveryInterval = 10 * time.Second
	// MaxConnectionTests is how many connection tests of unsaved servers
	// a tenant may make per ConnectionTestWindow.
	MaxConnectionTests   = 6
	ConnectionTestWindow = time.Minute
	// MaxCallsPerMinute bounds a server's maxCallsPerMinute and the
	// instance's cap of it (QUAVON_MCP_MAX_CALLS_PER_MINUTE, whose
	// default it is): tool calls per server and CallLimitWindow, counted
	// across reviews and replicas in the database.
	MaxCallsPerMinute = 600
	CallLimitWindow   = time.Minute
	// FinderMaxSteps and FinderWallClock bound the finder step.
	FinderMaxSteps  = 8
	FinderWallClock = 240 * time.Second
	// RecentCalls is how many call records the API lists per server.
	RecentCalls = 50
	// DefaultRetentionDays is the tenant retention of call records when none is set.
	DefaultRetentionDays = 90
	// MaxRequestBody is the API's body cap; MaxReviewRequestBody the cap of a review request.
	MaxRequestBody       = 64 << 10
	MaxReviewRequestBody = 8 << 20
	// BoundaryBytes is the entropy of an untrusted-wrapper boundary (128 bits).
	BoundaryBytes = 16
)
