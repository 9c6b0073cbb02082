package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// policyRepo implements [ports.PolicyRepo] inside one tenant transaction.
// Server ids are stored as uuid[] and read back as text in canonical
// lowercase form.
type policyRepo struct{ t *tenantTx }

func (p policyRepo) Default(ctx context.Context) (*policy.McpSection, error) {
	var (
		mode     string
		servers  []string
		maxCalls int
	)
	err := p.t.db.NewRaw("SELECT mode, servers::text[], max_calls FROM tenant_mcp_defaults WHERE tenant_id = ?",
		p.t.tenantID).Scan(ctx, &mode, pgdialect.Array(&servers), &maxCalls)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: tenant default policy: %w", err)
	}
	s, err := policy.UnmarshalMcpSectionFromDatabase(mode, servers, maxCalls)
	if err != nil {
		return nil, fmt.Errorf("postgres: tenant default policy: %w", err)
	}
	return &s, nil
}

// PutDefault stores the tenant default. Its mode must be on or off (the
// table refuses inherit, which a default cannot have).
func (p policyRepo) PutDefault(ctx context.Context, s policy.McpSection) error {
	err := inSavepoint(ctx, p.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw(`
		INSERT INTO tenant_mcp_defaults (tenant_id, mode, servers, max_calls, updated_at)
		VALUES (?, ?, ?::uuid[], ?, now())
		ON CONFLICT (tenant_id) DO UPDATE
		SET mode = EXCLUDED.mode, servers = EXCLUDED.servers, max_calls = EXCLUDED.max_calls, updated_at = now()`,
			p.t.tenantID, s.Mode().String(), pgdialect.Array(s.Servers()), s.MaxCalls()).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put tenant default policy: %w", err)
	}
	return nil
}

func (p policyRepo) Repository(ctx context.Context, repositoryID string) (policy.McpSection, bool, error) {
	if !isUUID(repositoryID) {
		return policy.McpSection{}, false, nil
	}
	var (
		mode     string
		servers  []string
		maxCalls int
	)
	err := p.t.db.NewRaw(`SELECT mode, servers::text[], max_calls FROM repository_policies
		WHERE repository_id = ? AND tenant_id = ?`, repositoryID, p.t.tenantID).
		Scan(ctx, &mode, pgdialect.Array(&servers), &maxCalls)
	if errors.Is(err, sql.ErrNoRows) {
		return policy.McpSection{}, false, nil
	}
	if err != nil {
		return policy.McpSection{}, false, fmt.Errorf("postgres: repository policy: %w", err)
	}
	s, err := policy.UnmarshalMcpSectionFromDatabase(mode, servers, maxCalls)
	if err != nil {
		return policy.McpSection{}, false, fmt.Errorf("postgres: repository policy: %w", err)
	}
	return s, true, nil
}

// Repositories reads the tenant default and the stored sections of ids
// in one query (one round trip for a page of the repository list); ids
// that are not UUIDs have none. The default's row is the one without a
// repository id.
func (p policyRepo) Repositories(ctx context.Context, ids []string) (*policy.McpSection, map[string]policy.McpSection, error) {
	query := make([]string, 0, len(ids))
	for _, id := range ids {
		if isUUID(id) {
			query = append(query, strings.ToLower(id))
		}
	}
	var rows []struct {
		RepositoryID string   `bun:"repository_id"`
		Mode         string   `bun:"mode"`
		Servers      []string `bun:"servers,array"`
		MaxCalls     int      `bun:"max_calls"`
	}
	err := p.t.db.NewRaw(`SELECT '' AS repository_id, mode, servers::text[] AS servers, max_calls
		FROM tenant_mcp_defaults WHERE tenant_id = ?
		UNION ALL
		SELECT repository_id::text, mode, servers::text[], max_calls
		FROM repository_policies WHERE repository_id = ANY(?::uuid[]) AND tenant_id = ?`,
		p.t.tenantID, pgdialect.Array(query), p.t.tenantID).Scan(ctx, &rows)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: repository policies: %w", err)
	}
	var def *policy.McpSection
	out := make(map[string]policy.McpSection, len(query))
	for _, r := range rows {
		s, err := policy.UnmarshalMcpSectionFromDatabase(r.Mode, r.Servers, r.MaxCalls)
		if err != nil {
			return nil, nil, fmt.Errorf("postgres: repository policy %q: %w", r.RepositoryID, err)
		}
		if r.RepositoryID == "" {
			def = &s
			continue
		}
		out[r.RepositoryID] = s
	}
	return def, out, nil
}

// PutRepository stores a repository's section; ErrNotFound when the
// repository is not one of the tenant's.
func (p policyRepo) PutRepository(ctx context.Context, repositoryID string, s policy.McpSection) error {
	if !isUUID(repositoryID) {
		return fmt.Errorf("postgres: put repository policy: %w", ports.ErrNotFound)
	}
	// Checked first: a policy row of another tenant's repository would
	// otherwise make the upsert fail with a row-level security error
	// instead of not found.
	exists, err := p.t.db.NewSelect().Table("repositories").
		Where("id = ?", repositoryID).Where("tenant_id = ?", p.t.tenantID).Exists(ctx)
	if err != nil {
		return fmt.Errorf("postgres: put repository policy: %w", err)
	}
	if !exists {
		return fmt.Errorf("postgres: put repository policy: %w", ports.ErrNotFound)
	}
	err = inSavepoint(ctx, p.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw(`
		INSERT INTO repository_policies (repository_id, tenant_id, mode, servers, max_calls, updated_at)
		VALUES (?, ?, ?, ?::uuid[], ?, now())
		ON CONFLICT (repository_id) DO UPDATE
		SET mode = EXCLUDED.mode, servers = EXCLUDED.servers, max_calls = EXCLUDED.max_calls, updated_at = now()`,
			repositoryID, p.t.tenantID, s.Mode().String(), pgdialect.Array(s.Servers()), s.MaxCalls()).Exec(ctx)
		return err
	})
	if code, _ := pgError(err); code == codeForeignKeyViolation {
		return fmt.Errorf("postgres: put repository policy: %w", ports.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: put repository policy: %w", err)
	}
	return nil
}

// ServersExist answers for every id given: true only for servers of the
// tenant. Ids that are not UUIDs exist nowhere. Ids compare case-insensitively.
func (p policyRepo) ServersExist(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	var query []string
	for _, id := range ids {
		out[id] = false
		if isUUID(id) {
			query = append(query, strings.ToLower(id))
		}
	}
	if len(query) == 0 {
		return out, nil
	}
	var found []string
	err := p.t.db.NewRaw("SELECT id::text FROM mcp_servers WHERE id = ANY(?::uuid[]) AND tenant_id = ?",
		pgdialect.Array(query), p.t.tenantID).Scan(ctx, &found)
	if err != nil {
		return nil, fmt.Errorf("postgres: servers exist: %w", err)
	}
	exists := make(map[string]bool, len(found))
	for _, id := range found {
		exists[id] = true
	}
	for _, id := range ids {
		out[id] = exists[strings.ToLower(id)]
	}
	return out, nil
}
