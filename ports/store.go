package ports

import (
	"context"
	"errors"
	"time"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
)

// Store errors. Adapters return these (wrapped or not) so the application
// can answer with the contract's codes without knowing SQL.
var (
	// ErrNotFound: no such row in the tenant (a foreign id is not found too).
	ErrNotFound = errors.New("not found")
	// ErrNameTaken: the server name is already used in the tenant.
	ErrNameTaken = errors.New("name taken")
	// ErrTooManyServers: the tenant already has the maximum number of servers.
	ErrTooManyServers = errors.New("too many servers")
	// ErrConflict: a unique constraint other than the server name.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the database cannot be reached, or is shutting down
	// or starting; the same request may succeed once it is back.
	ErrUnavailable = errors.New("database unavailable")
)

// Tenants runs work inside one tenant: a single database transaction under
// forced row-level security for that tenant. Everything fn does through tx
// commits together or not at all, so a change and its audit event are
// never separated. InTenant is safe for concurrent use; tx is not, and must
// not be used after fn returns.
//
// ReadInTenant is InTenant for fn that only reads, under the same
// row-level security, for the hot read routes: each read may run as a
// transaction of its own (so reads do not share a snapshot, as in a READ
// COMMITTED transaction, where every statement takes its own), and a
// write through tx fails.
type Tenants interface {
	InTenant(ctx context.Context, tenantID string, fn func(ctx context.Context, tx TenantTx) error) error
	ReadInTenant(ctx context.Context, tenantID string, fn func(ctx context.Context, tx TenantTx) error) error
}

// TenantTx is what one tenant transaction offers.
type TenantTx interface {
	Servers() ServerRepo
	Repositories() RepositoryRepo
	Policies() PolicyRepo
	Audit() AuditLog
	Calls() CallLog
	Reviews() ReviewRepo
	Settings() SettingsRepo
	PromptLogs() PromptLogRepo
	OAuthStates() OAuthStateRepo
}

// ServerRepo stores MCP servers of the transaction's tenant.
type ServerRepo interface {
	// Insert stores a new server with its encrypted credential (nil for
	// none). It serialises concurrent inserts of one tenant (a lock on the
	// tenant row) so the count check holds: ErrTooManyServers when the
	// tenant has max servers already, ErrNameTaken on a duplicate name.
	Insert(ctx context.Context, s *server.Server, encryptedCredential []byte, max int) error
	// Get returns a server or ErrNotFound.
	Get(ctx context.Context, id string) (*server.Server, error)
	// List returns the tenant's servers ordered by name.
	List(ctx context.Context) ([]*server.Server, error)
	// Update reads the server locked (SELECT … FOR UPDATE), passes it to fn,
	// and stores what fn returns: the zero [CredentialUpdate] keeps the
	// stored credential, Replace stores Encrypted in its place.
	// ErrNotFound when missing, ErrNameTaken on a rename to a used name.
	Update(ctx context.Context, id string, fn func(s *server.Server) (CredentialUpdate, error)) (*server.Server, error)
	// Delete removes a server (its call records go with it) or ErrNotFound.
	Delete(ctx context.Context, id string) error
	// Credential returns the stored encrypted credential (nil for none).
	Credential(ctx context.Context, id string) ([]byte, error)
	// ClaimDiscovery marks a live listing of the server (a discovery or a
	// connection test) as started, in one UPDATE that succeeds only when
	// the last one started at least interval ago by the database's clock,
	// so any number of API replicas agree. A discovery's claim is also
	// the server's lastDiscoveryAt; a test's is recorded nowhere a view
	// shows. When it does not succeed, ok is false and retryAfter tells
	// how long to wait. ErrNotFound when the server is missing.
	ClaimDiscovery(ctx context.Context, id string, interval time.Duration, l Listing) (ok bool, retryAfter time.Duration, err error)
	// RecordListTTL keeps the cache hint of the server's last listing
	// (0: none), which the recheck between reviews reads.
	RecordListTTL(ctx context.Context, id string, ttl time.Duration) error
	// ClaimConnectionTest counts a connection test of an unsaved server
	// against the tenant's limit: granted while the tenant made fewer
	// than max in the last window, by the database's clock, so any
	// number of API replicas share one count. When it is not, ok is false
	// and retryAfter tells when the oldest test of the window leaves it.
	ClaimConnectionTest(ctx context.Context, max int, window time.Duration) (ok bool, retryAfter time.Duration, err error)
	// TakeCall counts one tool call of the server in the current window
	// of the database's clock (windows of length window from the Unix
	// epoch: whole minutes for limits.CallLimitWindow) unless limit calls
	// are counted in it already: ok is false then, and nothing is
	// counted. One statement, so any number of review replicas share one
	// count and no two calls both take the last one; it also drops the
	// server's counts of earlier windows. ErrNotFound when the server is
	// missing (another tenant's too).
	TakeCall(ctx context.Context, serverID string, limit int, window time.Duration) (ok bool, err error)
}

// Listing is what a discovery claim is taken for ([ServerRepo.ClaimDiscovery]).
type Listing int

const (
	// ListingDiscovery: a discovery, recorded as the server's lastDiscoveryAt.
	ListingDiscovery Listing = iota
	// ListingTest: a connection test, which shares the discovery's
	// interval and stores nothing a view shows.
	ListingTest
)

// CredentialUpdate tells [ServerRepo.Update] what to do with the stored
// credential: keep it (Replace false), or replace it with Encrypted (nil
// clears it).
type CredentialUpdate struct {
	Replace   bool
	Encrypted []byte
}

// RepositoryRepo stores the tenant's repositories. What it returns was
// loaded through [repository.UnmarshalRepositoryFromDatabase]: a stored
// row that breaks a rule of the repository is an error, not a value.
type RepositoryRepo interface {
	// Insert stores a new repository; ErrConflict when the name or the
	// id is used.
	Insert(ctx context.Context, r *repository.Repository) error
	// Get returns a repository or ErrNotFound.
	Get(ctx context.Context, id string) (*repository.Repository, error)
	// Update reads the repository locked (SELECT … FOR UPDATE), passes
	// it to fn, and stores what fn changed (its visibility, the one thing
	// that changes). fn's error is returned as it is, and nothing is
	// stored. ErrNotFound when missing.
	Update(ctx context.Context, id string, fn func(r *repository.Repository) error) (*repository.Repository, error)
	// List returns at most limit repositories whose name sorts after
	// after ("" starts at the beginning), ordered by name.
	List(ctx context.Context, after string, limit int) ([]*repository.Repository, error)
}

// PolicyRepo stores the tenant's MCP default and repository policies.
type PolicyRepo interface {
	// Default returns the tenant default, or nil when none is stored.
	Default(ctx context.Context) (*policy.McpSection, error)
	PutDefault(ctx context.Context, s policy.McpSection) error
	// Repository returns a repository's stored section; ok is false when
	// none is stored (the section then inherits).
	Repository(ctx context.Context, repositoryID string) (s policy.McpSection, ok bool, err error)
	PutRepository(ctx context.Context, repositoryID string, s policy.McpSection) error
	// Repositories returns, in one read, the tenant default (nil when none
	// is stored, as Default) and the stored sections of those of ids that
	// have one (the others inherit).
	Repositories(ctx context.Context, ids []string) (def *policy.McpSection, stored map[string]policy.McpSection, err error)
	// ServersExist reports which of ids are servers of the tenant.
	ServersExist(ctx context.Context, ids []string) (map[string]bool, error)
}

// AuditEvent is one entry of the audit log. Details never hold secrets.
type AuditEvent struct {
	Action  string
	Actor   string
	Target  string
	At      time.Time
	Details map[string]any
}

// AuditLog appends and lists the tenant's audit events.
type AuditLog interface {
	Append(ctx context.Context, e AuditEvent) error
	// Recent returns at most limit events, newest first.
	Recent(ctx context.Context, limit int) ([]AuditEvent, error)
}

// ToolCall is the record of one MCP tool call: counts, sizes, a duration
// and the SHA-256 of the arguments. Never the arguments or the output
// (MC12).
type ToolCall struct {
	ServerID      string
	ReviewID      string // "" outside a review
	Tool          string
	Status        review.CallStatus
	Duration      time.Duration
	RequestBytes  int
	ResponseBytes int
	ArgumentsHash string
	// RemovedCharacters counts the invisible characters removed from the
	// result before the model read it (MC3), escaped ones included.
	RemovedCharacters int
	CreatedAt         time.Time
}

// CallLog stores the tenant's tool-call records.
type CallLog interface {
	Record(ctx context.Context, c ToolCall) error
	// Recent returns at most limit records of a server, newest first.
	Recent(ctx context.Context, serverID string, limit int) ([]ToolCall, error)
	// ForReview returns at most limit records of one review run, oldest first.
	ForReview(ctx context.Context, reviewID string, limit int) ([]ToolCall, error)
	// ReviewUsage sums the records of one review run, over all its
	// attempts (see [ReviewUsage]).
	ReviewUsage(ctx context.Context, reviewID string) (ReviewUsage, error)
}

// ReviewUsage is what the tool calls of one review run used. The records
// are the run's memory across attempts: a retried job resumes the run's
// budget from them, and the run's stats are read from them.
type ReviewUsage struct {
	// Reserved counts calls that passed the budget: records with an
	// arguments hash, except budget_exhausted.
	Reserved int
	// Sent counts calls that reached the server: ok, error, too_large,
	// unavailable.
	Sent int
	// Bytes are the bytes the budget kept: the response bytes of ok and
	// error calls (at most a reservation each) and a whole reservation
	// for each too_large call.
	Bytes int
	// Blocked counts blocked records (arguments or result with a secret,
	// a tool whose definition changed).
	Blocked int
}

// OAuthStateRepo stores the pending code-flow connections of the
// transaction's tenant (the "connect" of the web interface, between the
// redirect to the authorization server and its callback), each a
// [server.PendingConnection] with its sealed secret. Nothing stored is a
// secret in clear: the connection holds the state and the session as
// their SHA-256, and its [server.ConnectSecret] (the PKCE verifier and
// the client id) is only the sealed bytes, under the associated data
// oauth_state:<hex of the state hash>. What Take returns was loaded
// through [server.UnmarshalPendingConnectionFromDatabase]: a stored row
// that breaks a rule of the pending connection is an error wrapping
// server.ErrPendingConnectionMalformed, not a connection. A state is used
// once: Take deletes it.
type OAuthStateRepo interface {
	// Insert stores pc with its sealed secret (required) and deletes the
	// tenant's states that expired before pc's start. ErrNotFound when
	// pc's server is not one of the tenant's, ErrConflict on a known
	// state hash.
	Insert(ctx context.Context, pc *server.PendingConnection, sealed []byte) error
	// Take deletes the pending connection with this state hash and
	// returns it with its sealed secret, expired or not (the connection
	// judges the time); ErrNotFound when there is none, also after an
	// earlier Take or when its server was deleted.
	Take(ctx context.Context, stateHash []byte) (*server.PendingConnection, []byte, error)
}
