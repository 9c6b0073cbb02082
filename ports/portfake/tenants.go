package portfake

import (
	"context"
	"sync"

	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// Tenants is an in-memory ports.Tenants: one Tx per tenant. It
// serialises transactions (like the row lock the real store takes) and
// does not roll back; use-case tests that need atomicity use PostgreSQL.
type Tenants struct {
	mu  sync.Mutex
	Txs map[string]*Tx
	// NewTx builds the repos of a tenant seen for the first time.
	NewTx func(tenantID string) *Tx
}

type Tx struct {
	ServerRepo     ports.ServerRepo
	RepositoryRepo ports.RepositoryRepo
	PolicyRepo     ports.PolicyRepo
	AuditLog       *Audit
	CallLog        *Calls
	ReviewRepo     ports.ReviewRepo
	SettingsRepo   *StoredSettings
	PromptLogRepo  *PromptLogs
	OAuthStateRepo *OAuthStates
}

func (t *Tx) Servers() ports.ServerRepo { return t.ServerRepo }

func (t *Tx) Repositories() ports.RepositoryRepo { return t.RepositoryRepo }

func (t *Tx) Policies() ports.PolicyRepo { return t.PolicyRepo }

func (t *Tx) Audit() ports.AuditLog { return t.AuditLog }

func (t *Tx) Calls() ports.CallLog { return t.CallLog }

func (t *Tx) Reviews() ports.ReviewRepo { return t.ReviewRepo }

func (t *Tx) Settings() ports.SettingsRepo { return t.SettingsRepo }

func (t *Tx) PromptLogs() ports.PromptLogRepo { return t.PromptLogRepo }

func (t *Tx) OAuthStates() ports.OAuthStateRepo { return t.OAuthStateRepo }

// ReadInTenant is InTenant (the fake has no read-only mode).
func (f *Tenants) ReadInTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	return f.InTenant(ctx, tenantID, fn)
}

func (f *Tenants) InTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Txs == nil {
		f.Txs = map[string]*Tx{}
	}
	tx, ok := f.Txs[tenantID]
	if !ok {
		tx = f.NewTx(tenantID)
		if tx.AuditLog == nil {
			tx.AuditLog = &Audit{}
		}
		if tx.CallLog == nil {
			tx.CallLog = &Calls{}
		}
		if tx.SettingsRepo == nil {
			tx.SettingsRepo = &StoredSettings{Value: settings.Default()}
		}
		if tx.PromptLogRepo == nil {
			tx.PromptLogRepo = &PromptLogs{}
		}
		if tx.OAuthStateRepo == nil {
			servers, _ := tx.ServerRepo.(*Servers)
			tx.OAuthStateRepo = &OAuthStates{Servers: servers}
		}
		f.Txs[tenantID] = tx
	}
	return fn(ctx, tx)
}
