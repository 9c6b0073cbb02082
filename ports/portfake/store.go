package portfake

import (
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// Store is the whole in-memory store, wired together the way PostgreSQL's
// tables are: a review needs its repository, a prompt log its review, a
// policy its repository; deleting a server deletes its call records;
// ServersExist reads the servers; the rotators see every tenant's
// credentials and prompt logs. It is the fake the port contract suites
// (ports/porttest) hold to PostgreSQL.
type Store struct {
	Tenants       *Tenants
	Accounts      *Accounts
	Rotator       *Rotator
	PromptRotator *PromptRotator
}

// NewStore returns an empty store whose servers answer ClaimDiscovery by
// clock.
func NewStore(clock ports.Clock) *Store {
	s := &Store{
		Accounts:      NewAccounts(),
		Rotator:       &Rotator{Creds: map[string][]byte{}},
		PromptRotator: &PromptRotator{},
	}
	s.Tenants = &Tenants{NewTx: func(tenantID string) *Tx {
		calls := &Calls{}
		repos := NewRepositories()
		servers := &Servers{Rows: map[string]*server.Server{}, Creds: s.Rotator.Creds, Clock: clock, TenantID: tenantID, Calls: calls}
		reviews := &Reviews{Runs: map[string]*review.Run{}, Repos: repos}
		return &Tx{
			ServerRepo:     servers,
			RepositoryRepo: repos,
			PolicyRepo:     &Policies{Repos: map[string]policy.McpSection{}, Servers: map[string]bool{}, RepositoryRepo: repos, ServerRepo: servers},
			AuditLog:       &Audit{},
			CallLog:        calls,
			ReviewRepo:     reviews,
			SettingsRepo:   &StoredSettings{Value: settings.Default()},
			PromptLogRepo:  &PromptLogs{Reviews: reviews, Rotator: s.PromptRotator},
		}
	}}
	return s
}
