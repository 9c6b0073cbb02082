package postgres_test

import (
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/ports/porttest"
)

// The port contract suites of ports/porttest, against PostgreSQL: the
// reference the in-memory fakes are held to. One database serves every
// subtest of a suite; each subtest makes tenants of its own.
func contract(t *testing.T) porttest.Open {
	db := pgtest.New(t)
	h := porttest.Harness{
		Tenants:     postgres.NewTenants(db),
		Accounts:    postgres.NewAccounts(db),
		Credentials: postgres.NewRotator(db),
		PromptLogs:  postgres.NewPromptLogRotator(db),
		Sessions:    postgres.NewSessions(db),
	}
	return func(*testing.T) porttest.Harness { return h }
}

func TestContractServerRepo(t *testing.T)        { porttest.ServerRepo(t, contract(t)) }
func TestContractRepositoryRepo(t *testing.T)    { porttest.RepositoryRepo(t, contract(t)) }
func TestContractPolicyRepo(t *testing.T)        { porttest.PolicyRepo(t, contract(t)) }
func TestContractAuditLog(t *testing.T)          { porttest.AuditLog(t, contract(t)) }
func TestContractCallLog(t *testing.T)           { porttest.CallLog(t, contract(t)) }
func TestContractReviewRepo(t *testing.T)        { porttest.ReviewRepo(t, contract(t)) }
func TestContractSettingsRepo(t *testing.T)      { porttest.SettingsRepo(t, contract(t)) }
func TestContractPromptLogRepo(t *testing.T)     { porttest.PromptLogRepo(t, contract(t)) }
func TestContractAccounts(t *testing.T)          { porttest.Accounts(t, contract(t)) }
func TestContractTokenLifecycle(t *testing.T)    { porttest.TokenLifecycle(t, contract(t)) }
func TestContractCredentialRotator(t *testing.T) { porttest.CredentialRotator(t, contract(t)) }
func TestContractPromptLogRotator(t *testing.T)  { porttest.PromptLogRotator(t, contract(t)) }

// WebSessions has no fake: the web tests run on PostgreSQL.
func TestContractWebSessions(t *testing.T) { porttest.WebSessions(t, contract(t)) }

func TestContractOAuthServers(t *testing.T)   { porttest.OAuthServers(t, contract(t)) }
func TestContractOAuthStateRepo(t *testing.T) { porttest.OAuthStateRepo(t, contract(t)) }
