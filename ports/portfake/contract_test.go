package portfake_test

import (
	"testing"
	"time"

	"github.com/codelotse/codelotse/ports/portfake"
	"github.com/codelotse/codelotse/ports/porttest"
)

// The port contract suites of ports/porttest, against the in-memory
// store: the fakes must agree with PostgreSQL (adapters/postgres runs the
// same suites).
func open(*testing.T) porttest.Harness {
	s := portfake.NewStore(wallClock{})
	return porttest.Harness{Tenants: s.Tenants, Accounts: s.Accounts, Credentials: s.Rotator, PromptLogs: s.PromptRotator}
}

// wallClock is the database's clock ClaimDiscovery judges by.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func TestContractServerRepo(t *testing.T)        { porttest.ServerRepo(t, open) }
func TestContractRepositoryRepo(t *testing.T)    { porttest.RepositoryRepo(t, open) }
func TestContractPolicyRepo(t *testing.T)        { porttest.PolicyRepo(t, open) }
func TestContractAuditLog(t *testing.T)          { porttest.AuditLog(t, open) }
func TestContractCallLog(t *testing.T)           { porttest.CallLog(t, open) }
func TestContractReviewRepo(t *testing.T)        { porttest.ReviewRepo(t, open) }
func TestContractSettingsRepo(t *testing.T)      { porttest.SettingsRepo(t, open) }
func TestContractPromptLogRepo(t *testing.T)     { porttest.PromptLogRepo(t, open) }
func TestContractAccounts(t *testing.T)          { porttest.Accounts(t, open) }
func TestContractTokenLifecycle(t *testing.T)    { porttest.TokenLifecycle(t, open) }
func TestContractCredentialRotator(t *testing.T) { porttest.CredentialRotator(t, open) }
func TestContractPromptLogRotator(t *testing.T)  { porttest.PromptLogRotator(t, open) }
func TestContractOAuthServers(t *testing.T)      { porttest.OAuthServers(t, open) }
func TestContractOAuthStateRepo(t *testing.T)    { porttest.OAuthStateRepo(t, open) }
