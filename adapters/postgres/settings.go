package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// settingsRepo implements [ports.SettingsRepo] on the tenant's row of
// tenants, inside one tenant transaction.
type settingsRepo struct{ t *tenantTx }

// Get reads the settings FOR SHARE: a Put of another transaction (an
// UPDATE of the row) waits until this one ends.
func (s settingsRepo) Get(ctx context.Context) (settings.Settings, error) {
	return s.read(ctx, "FOR SHARE")
}

// GetForUpdate reads the settings FOR NO KEY UPDATE, the lock the UPDATE
// of Put takes anyway: a second change waits at its read until the first
// commits and then reads what it stored. (Two FOR SHARE reads followed
// by two UPDATEs deadlock: each UPDATE waits for the other's share lock.)
// Rows that reference the tenant (FOR KEY SHARE) are not blocked.
func (s settingsRepo) GetForUpdate(ctx context.Context) (settings.Settings, error) {
	return s.read(ctx, "FOR NO KEY UPDATE")
}

func (s settingsRepo) read(ctx context.Context, lock string) (settings.Settings, error) {
	var (
		days, ttl int
		debug     bool
	)
	err := s.t.db.NewRaw(`SELECT retention_days, debug_prompts_enabled, debug_prompts_ttl_hours
		FROM tenants WHERE id = ? `+lock, s.t.tenantID).Scan(ctx, &days, &debug, &ttl)
	if errors.Is(err, sql.ErrNoRows) {
		return settings.Settings{}, fmt.Errorf("postgres: tenant settings: %w", ports.ErrNotFound)
	}
	if err != nil {
		return settings.Settings{}, fmt.Errorf("postgres: tenant settings: %w", err)
	}
	st, err := settings.UnmarshalFromDatabase(days, debug, ttl)
	if err != nil {
		return settings.Settings{}, fmt.Errorf("postgres: tenant settings: %w", err)
	}
	return st, nil
}

func (s settingsRepo) Put(ctx context.Context, st settings.Settings) error {
	if st.IsZero() {
		return errors.New("postgres: put tenant settings: zero settings")
	}
	res, err := s.t.db.NewUpdate().Table("tenants").
		Set("retention_days = ?", st.RetentionDays()).
		Set("debug_prompts_enabled = ?", st.DebugPrompts()).
		Set("debug_prompts_ttl_hours = ?", st.PromptTTLHours()).
		Where("id = ?", s.t.tenantID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("postgres: put tenant settings: %w", err)
	}
	if n, err := rowsAffected(res); err != nil || n != 1 {
		return fmt.Errorf("postgres: put tenant settings: %w", errors.Join(ports.ErrNotFound, err))
	}
	return nil
}
